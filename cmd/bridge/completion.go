package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// `bridge completion SHELL` prints a completion script. The bash and zsh
// scripts ask the binary itself for candidates: urfave/cli answers a command
// line ending in --generate-bash-completion (App.EnableBashCompletion) with
// the subcommands or, after a word starting with "-", the flags that fit, so
// the scripts stay right when commands and flags change. The fish script is
// generated whole from the command tree (App.ToFishCompletion).

const bashCompletion = `# bash completion for bridge (tasksbridge). Load it in this shell with
#   source <(bridge completion bash)
# or install it for every shell: bridge completion bash > /etc/bash_completion.d/bridge
_bridge_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local -a args=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
  if [[ "$cur" == -* ]]; then
    args+=("$cur")
  fi
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${args[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o bashdefault -o default -F _bridge_complete bridge
`

const zshCompletion = `#compdef bridge
# zsh completion for bridge (tasksbridge). Load it in this shell with
#   source <(bridge completion zsh)
# or save it as _bridge in a directory of $fpath.
_bridge() {
  local -a args opts
  args=("${(@)words[2,CURRENT-1]}")
  if [[ "${words[CURRENT]}" == -* ]]; then
    args+=("${words[CURRENT]}")
  fi
  opts=("${(@f)$("${words[1]}" "${(@)args}" --generate-bash-completion 2>/dev/null)}")
  if [[ -n "${opts[1]}" ]]; then
    compadd -a opts
  else
    _files
  fi
}
if [[ "${funcstack[1]}" == "_bridge" ]]; then
  _bridge "$@"
else
  compdef _bridge bridge
fi
`

func init() {
	register(&cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash:  source <(bridge completion bash)   (or save it in /etc/bash_completion.d/bridge)\n" +
			"zsh:   source <(bridge completion zsh)    (or save it as _bridge in a directory of $fpath)\n" +
			"fish:  bridge completion fish > ~/.config/fish/completions/bridge.fish",
		Action: runCompletion,
	})
}

func runCompletion(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("completion: name one shell: bridge completion bash|zsh|fish", 2)
	}
	var w io.Writer = c.App.Writer
	switch sh := c.Args().First(); sh {
	case "bash":
		_, err := io.WriteString(w, bashCompletion)
		return err
	case "zsh":
		_, err := io.WriteString(w, zshCompletion)
		return err
	case "fish":
		s, err := c.App.ToFishCompletion()
		if err != nil {
			return fmt.Errorf("completion: fish: %w", err)
		}
		_, err = io.WriteString(w, s)
		return err
	default:
		return cli.Exit(fmt.Sprintf("completion: unknown shell %q: want bash, zsh or fish", sh), 2)
	}
}
