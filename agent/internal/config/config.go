// Package config reads the agent's settings from flags and CTXBENCH_AGENT_* environment variables.
// Flags override the environment.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
)

// Config is the agent's resolved configuration.
type Config struct {
	Server   string // HOST:PORT of the ctxbench server's gRPC listener
	Token    string // agent bearer token
	Kernels  string // directory holding kernel executables
	Spool    string // directory for identity and unacknowledged results
	Name     string // human-friendly name; empty means the hostname
	LogLevel slog.Level
	Version  bool // print the version and exit
}

// UsageError is a configuration the agent cannot start with. main exits 2 on it.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// ErrHelp is returned when -h/--help was asked for; usage has been printed.
var ErrHelp = flag.ErrHelp

// Parse resolves the configuration from args (without the program name) and getenv.
// Precedence, highest first: flag, environment. The token comes from --token, else --token-file,
// else CTXBENCH_AGENT_TOKEN, else CTXBENCH_AGENT_TOKEN_FILE.
func Parse(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("ctxbench-agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by the caller, as one line
	fs.StringVar(&c.Server, "server", getenv("CTXBENCH_AGENT_SERVER"), "ctxbench server gRPC address HOST:PORT (env CTXBENCH_AGENT_SERVER)")
	token := fs.String("token", "", "agent token (env CTXBENCH_AGENT_TOKEN); prefer --token-file")
	tokenFile := fs.String("token-file", "", "file holding the agent token (env CTXBENCH_AGENT_TOKEN_FILE)")
	fs.StringVar(&c.Kernels, "kernels", getenv("CTXBENCH_AGENT_KERNELS"), "directory of kernel executables (env CTXBENCH_AGENT_KERNELS)")
	fs.StringVar(&c.Spool, "spool", getenv("CTXBENCH_AGENT_SPOOL"), "spool directory: agent identity and unacknowledged results (env CTXBENCH_AGENT_SPOOL)")
	fs.StringVar(&c.Name, "name", getenv("CTXBENCH_AGENT_NAME"), "machine name shown in the explorer, default the hostname (env CTXBENCH_AGENT_NAME)")
	logLevel := fs.String("log-level", envOr(getenv, "CTXBENCH_AGENT_LOG_LEVEL", "info"), "debug, info, warn or error (env CTXBENCH_AGENT_LOG_LEVEL)")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(usage, "usage: ctxbench-agent --server HOST:PORT --token-file PATH --kernels DIR --spool DIR [--name NAME]")
			fs.SetOutput(usage)
			fs.PrintDefaults()
			return c, ErrHelp
		}
		return c, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return c, usagef("unexpected argument %q", fs.Arg(0))
	}
	if c.Version {
		return c, nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if err := c.LogLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return c, usagef("invalid --log-level %q: want debug, info, warn or error", *logLevel)
	}
	var err error
	switch {
	case set["token"] && set["token-file"]:
		return c, usagef("give either --token or --token-file, not both")
	case set["token"]:
		c.Token = *token
	case set["token-file"]:
		c.Token, err = readToken(*tokenFile)
	case getenv("CTXBENCH_AGENT_TOKEN") != "":
		c.Token = getenv("CTXBENCH_AGENT_TOKEN")
	case getenv("CTXBENCH_AGENT_TOKEN_FILE") != "":
		c.Token, err = readToken(getenv("CTXBENCH_AGENT_TOKEN_FILE"))
	}
	if err != nil {
		return c, err
	}
	return c, c.validate()
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", usagef("read token file: %v", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (c *Config) validate() error {
	if c.Server == "" {
		return usagef("missing --server HOST:PORT (or CTXBENCH_AGENT_SERVER)")
	}
	host, port, err := net.SplitHostPort(c.Server)
	if err != nil || host == "" {
		return usagef("invalid --server %q: want HOST:PORT", c.Server)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return usagef("invalid --server %q: port must be 1-65535", c.Server)
	}
	if c.Token == "" {
		return usagef("missing agent token: give --token-file, --token, CTXBENCH_AGENT_TOKEN_FILE or CTXBENCH_AGENT_TOKEN")
	}
	if strings.ContainsAny(c.Token, " \t\r\n") {
		return usagef("invalid agent token: it contains whitespace")
	}
	if c.Kernels == "" {
		return usagef("missing --kernels DIR (or CTXBENCH_AGENT_KERNELS)")
	}
	st, err := os.Stat(c.Kernels)
	if err != nil {
		return usagef("invalid --kernels: %v", err)
	}
	if !st.IsDir() {
		return usagef("invalid --kernels %s: not a directory", c.Kernels)
	}
	if c.Spool == "" {
		return usagef("missing --spool DIR (or CTXBENCH_AGENT_SPOOL)")
	}
	return nil
}
