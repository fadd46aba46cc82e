// Package config reads the agent's settings from flags and CTXBENCH_AGENT_* environment variables.
// Flags override the environment.
package config

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Config is the agent's resolved configuration.
type Config struct {
	Server string // HOST:PORT of the ctxbench server's gRPC listener
	// Token is the enrollment secret: a join token (JoinToken true) or the server's multi-use agent
	// token. Used only while the state dir has no machine credential. May be empty once enrolled.
	Token     string
	JoinToken bool
	Kernels   string // directory holding kernel executables
	Spool     string // the state dir: identity, machine credential, unacknowledged results
	Name      string // human-friendly name; empty means the hostname
	LogLevel  slog.Level
	Version   bool // print the version and exit

	CAFile        string   // PEM of the CA that signed the server's certificate
	CAFingerprint string   // "sha256:<hex>" of the CA certificate's DER (pinning)
	Insecure      bool     // plaintext gRPC (the server must run with grpc_tls=false)
	ScratchDirs   []string // where kernels may put files (`dir` parameters); default <state dir>/scratch
	// Labels are the host's key=value labels (--label, CTXBENCH_AGENT_LABELS), sent in every Hello.
	Labels map[string]string
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
	token := fs.String("token", "", "multi-use agent token to enroll with (env CTXBENCH_AGENT_TOKEN); prefer --token-file")
	tokenFile := fs.String("token-file", "", "file holding the agent token (env CTXBENCH_AGENT_TOKEN_FILE)")
	joinToken := fs.String("join-token", "", "join token to enroll with, once (env CTXBENCH_AGENT_JOIN_TOKEN); prefer --join-token-file")
	joinTokenFile := fs.String("join-token-file", "", "file holding the join token (env CTXBENCH_AGENT_JOIN_TOKEN_FILE)")
	fs.StringVar(&c.Kernels, "kernels", getenv("CTXBENCH_AGENT_KERNELS"), "directory of kernel executables (env CTXBENCH_AGENT_KERNELS)")
	stateDir := envOr(getenv, "CTXBENCH_AGENT_STATE_DIR", getenv("CTXBENCH_AGENT_SPOOL"))
	fs.StringVar(&c.Spool, "spool", stateDir, "state dir: identity, machine credential, unacknowledged results (env CTXBENCH_AGENT_STATE_DIR)")
	fs.StringVar(&c.Spool, "state-dir", stateDir, "alias of --spool")
	fs.StringVar(&c.CAFile, "ca-file", getenv("CTXBENCH_AGENT_CA_FILE"), "PEM file of the CA that signed the server's certificate (env CTXBENCH_AGENT_CA_FILE)")
	fs.StringVar(&c.CAFingerprint, "ca-fingerprint", getenv("CTXBENCH_AGENT_CA_FINGERPRINT"), "sha256:<hex> of the server CA certificate to pin (env CTXBENCH_AGENT_CA_FINGERPRINT)")
	insecure := fs.Bool("insecure", envBool(getenv("CTXBENCH_AGENT_INSECURE")), "plaintext gRPC, only with a server that has grpc_tls=false (env CTXBENCH_AGENT_INSECURE=true)")
	scratch := fs.String("scratch-dir", getenv("CTXBENCH_AGENT_SCRATCH_DIRS"), "comma list of directories kernels may write scratch files in, default <state dir>/scratch (env CTXBENCH_AGENT_SCRATCH_DIRS)")
	fs.StringVar(&c.Name, "name", getenv("CTXBENCH_AGENT_NAME"), "machine name shown in the explorer, default the hostname (env CTXBENCH_AGENT_NAME)")
	var labels labelFlag
	fs.Var(&labels, "label", "a key=value label of this host, repeatable; added to CTXBENCH_AGENT_LABELS (comma-separated), a flag wins on the same key")
	logLevel := fs.String("log-level", envOr(getenv, "CTXBENCH_AGENT_LOG_LEVEL", "info"), "debug, info, warn or error (env CTXBENCH_AGENT_LOG_LEVEL)")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(usage, "usage: ctxbench-agent --server HOST:PORT (--join-token-file PATH | --token-file PATH) [--ca-fingerprint sha256:HEX | --ca-file PEM] --kernels DIR --state-dir DIR [--name NAME] [--label KEY=VALUE]...")
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

	var err error
	if err = c.LogLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return c, usagef("invalid --log-level %q: want debug, info, warn or error", *logLevel)
	}
	c.Insecure = *insecure
	if c.Labels, err = parseLabels(append(splitLabelsEnv(getenv("CTXBENCH_AGENT_LABELS")), labels...)); err != nil {
		return c, err
	}
	for _, d := range strings.Split(*scratch, ",") {
		if d = strings.TrimSpace(d); d != "" {
			c.ScratchDirs = append(c.ScratchDirs, d)
		}
	}
	if err = c.resolveToken(set, getenv, tokenFlags{*token, *tokenFile, *joinToken, *joinTokenFile}); err != nil {
		return c, err
	}
	return c, c.validate()
}

// tokenFlags are the token flags' values.
type tokenFlags struct{ token, tokenFile, joinToken, joinTokenFile string }

// resolveToken sets Token and JoinToken from the flags given (set) or, without any, the environment.
func (c *Config) resolveToken(set map[string]bool, getenv func(string) string, f tokenFlags) error {
	var err error
	switch {
	case set["join-token"] && set["join-token-file"]:
		return usagef("give either --join-token or --join-token-file, not both")
	case set["join-token"]:
		c.Token, c.JoinToken = f.joinToken, true
	case set["join-token-file"]:
		c.Token, err = readToken(f.joinTokenFile)
		c.JoinToken = true
	}
	if err != nil {
		return err
	}
	if c.JoinToken && (set["token"] || set["token-file"]) {
		return usagef("give either a join token or --token, not both")
	}
	switch {
	case c.JoinToken:
	case set["token"] && set["token-file"]:
		return usagef("give either --token or --token-file, not both")
	case set["token"]:
		c.Token = f.token
	case set["token-file"]:
		c.Token, err = readToken(f.tokenFile)
	case getenv("CTXBENCH_AGENT_TOKEN") != "":
		c.Token = getenv("CTXBENCH_AGENT_TOKEN")
	case getenv("CTXBENCH_AGENT_JOIN_TOKEN") != "":
		c.Token, c.JoinToken = getenv("CTXBENCH_AGENT_JOIN_TOKEN"), true
	case getenv("CTXBENCH_AGENT_JOIN_TOKEN_FILE") != "":
		c.Token, err = readToken(getenv("CTXBENCH_AGENT_JOIN_TOKEN_FILE"))
		c.JoinToken = true
	case getenv("CTXBENCH_AGENT_TOKEN_FILE") != "":
		c.Token, err = readToken(getenv("CTXBENCH_AGENT_TOKEN_FILE"))
	}
	return err
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func envBool(v string) bool {
	b, _ := strconv.ParseBool(strings.TrimSpace(v))
	return b
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
	if strings.ContainsAny(c.Token, " \t\r\n") {
		return usagef("invalid agent token: it contains whitespace")
	}
	if c.Insecure && (c.CAFile != "" || c.CAFingerprint != "") {
		return usagef("--insecure turns TLS off: it cannot go with --ca-file or --ca-fingerprint")
	}
	if c.CAFile != "" && c.CAFingerprint != "" {
		return usagef("give either --ca-file or --ca-fingerprint, not both")
	}
	if fp := c.CAFingerprint; fp != "" {
		hexPart, ok := strings.CutPrefix(strings.ToLower(fp), "sha256:")
		if _, err := hex.DecodeString(hexPart); !ok || err != nil || len(hexPart) != 64 {
			return usagef("invalid --ca-fingerprint %q: want sha256:<64 hex digits>", fp)
		}
	}
	if c.Kernels == "" {
		return usagef("missing --kernels DIR (or CTXBENCH_AGENT_KERNELS)")
	}
	// Directories are resolved now, against the directory the agent started in: kernels run with their
	// scratch directory as the working directory, where a relative path would name something else.
	if err := absolute(&c.Kernels, &c.Spool); err != nil {
		return usagef("invalid directory: %v", err)
	}
	st, err := os.Stat(c.Kernels)
	if err != nil {
		return usagef("invalid --kernels: %v", err)
	}
	if !st.IsDir() {
		return usagef("invalid --kernels %s: not a directory", c.Kernels)
	}
	if c.Spool == "" {
		return usagef("missing --state-dir DIR (or --spool, CTXBENCH_AGENT_STATE_DIR)")
	}
	if c.Token == "" {
		if _, err := os.Stat(filepath.Join(c.Spool, "machine-credential")); err != nil {
			return usagef("missing enrollment token: give --join-token-file, --join-token, --token-file or --token (or CTXBENCH_AGENT_JOIN_TOKEN_FILE, ...); not needed once %s/machine-credential exists", c.Spool)
		}
	}
	if len(c.ScratchDirs) == 0 {
		c.ScratchDirs = []string{filepath.Join(c.Spool, "scratch")}
	}
	for i := range c.ScratchDirs {
		if err := absolute(&c.ScratchDirs[i]); err != nil {
			return usagef("invalid scratch directory: %v", err)
		}
	}
	return nil
}

// absolute makes each non-empty path absolute (against the current directory).
func absolute(paths ...*string) error {
	for _, p := range paths {
		if *p == "" || filepath.IsAbs(*p) {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", *p, err)
		}
		*p = abs
	}
	return nil
}
