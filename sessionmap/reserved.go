package sessionmap

// BridgePrincipal owns the session records the bridge keeps for itself in
// the store (the legacy upstream sessions it shares between replicas,
// pending input requests of modern-face tasks; the upstream's era has its
// own record, Store.UpstreamEra, and older bridges left it here). No client
// can have it: client principals are hex SHA-256 digests (PrincipalFromAuthorization,
// PrincipalFromMTLSSubject), "k" and a hex HMAC of one (KeyPrincipal), or
// empty, and GetSession matches the principal,
// so no client request can read these records. They need nothing beyond the
// Store interface, so every backend shares them between the processes that
// share the store.
const BridgePrincipal = "tasksbridge:bridge"
