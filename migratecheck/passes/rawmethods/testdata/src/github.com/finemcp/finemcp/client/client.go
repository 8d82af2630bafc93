// Package client is a test stub of github.com/finemcp/finemcp/client.
package client

import (
	"example.com/std/context"

	"github.com/finemcp/finemcp"
)

type Client struct{}

func (c *Client) GetTask(ctx context.Context, id string) (*finemcp.Task, error)    { return nil, nil }
func (c *Client) GetTaskResult(ctx context.Context, id string) (any, error)        { return nil, nil }
func (c *Client) CancelTask(ctx context.Context, id string) (*finemcp.Task, error) { return nil, nil }
func (c *Client) ListTasks(ctx context.Context, cursor string) (*finemcp.ListTasksResult, error) {
	return nil, nil
}
func (c *Client) IterateTasks(ctx context.Context) *TasksIterator { return nil }

type TasksIterator struct{}

type LoadBalancer struct{}

func (l *LoadBalancer) GetTask(ctx context.Context, id string) (*finemcp.Task, error) {
	return nil, nil
}
func (l *LoadBalancer) GetTaskResult(ctx context.Context, id string) (any, error) { return nil, nil }
func (l *LoadBalancer) CancelTask(ctx context.Context, id string) (*finemcp.Task, error) {
	return nil, nil
}
func (l *LoadBalancer) ListTasks(ctx context.Context, cursor string) (*finemcp.ListTasksResult, error) {
	return nil, nil
}
