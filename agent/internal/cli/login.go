package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

func setupLogin(a *app, fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			// A token on the command line would sit in the shell's history and in every `ps` listing.
			return usageErrorf("login takes no arguments: the token is read from stdin or CTXBENCH_TOKEN, " +
				"never from the command line")
		}
		server := firstOf(a.server, a.env.Getenv("CTXBENCH_SERVER"))
		if server == "" {
			return usageErrorf("login: give --server URL (or set CTXBENCH_SERVER)")
		}
		base, err := normaliseServer(server)
		if err != nil {
			return err
		}
		token, err := readToken(a.env)
		if err != nil {
			return err
		}
		caFile := firstOf(a.caFile, a.env.Getenv("CTXBENCH_CA_FILE"))
		c, err := newClient(base, token, caFile, a.timeout)
		if err != nil {
			return err
		}
		scope, err := checkToken(ctx, c)
		if err != nil {
			return err
		}
		path, err := configPath(a.env.Getenv)
		if err != nil {
			return err
		}
		if err := saveConfig(path, Config{Server: base, Token: token, CAFile: caFile}); err != nil {
			return err
		}
		fmt.Fprintf(a.env.Stdout, "logged in to %s (scope %s); saved in %s\n", base, scope, path)
		return nil
	}
}

// readToken takes CTXBENCH_TOKEN, else a line typed at the terminal (not echoed), else stdin's first line.
func readToken(env Env) (string, error) {
	if t := strings.TrimSpace(env.Getenv("CTXBENCH_TOKEN")); t != "" {
		return t, nil
	}
	var line string
	var err error
	if env.ReadSecret != nil {
		line, err = env.ReadSecret("token: ")
	} else {
		line, err = bufio.NewReader(env.Stdin).ReadString('\n')
		if err == io.EOF {
			err = nil
		}
	}
	if err != nil {
		return "", usageErrorf("read the token: %v", err)
	}
	token := strings.TrimSpace(line)
	if token == "" {
		return "", usageErrorf("login: no token (pipe it on stdin or set CTXBENCH_TOKEN)")
	}
	return token, nil
}

// checkToken asks the server who the token is (GET /session, which refuses a wrong Bearer token with
// 401 and never answers 401 otherwise) and returns its scope.
func checkToken(ctx context.Context, c *Client) (string, error) {
	var s struct {
		Authenticated bool   `json:"authenticated"`
		Scope         string `json:"scope"`
	}
	if err := c.getJSON(ctx, "/session", nil, &s); err != nil {
		return "", fmt.Errorf("check the token: %w", err)
	}
	if !s.Authenticated {
		return "", serverErrorf("check the token: the server did not take it")
	}
	return s.Scope, nil
}
