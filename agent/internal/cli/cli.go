// Package cli is the `ctxbench` command line: a client of the server's REST API (docs/cli.md) and of
// nothing else. Main parses the arguments, runs one command and returns the process's exit code.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Env is everything a command reads or writes outside itself, so tests run it in-process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Version        string
	// StderrTTY: progress is drawn as a bar on stderr (else plain lines).
	StderrTTY bool
	// ReadSecret reads a token typed at a terminal without echoing it; nil when stdin is no terminal
	// (the token is then the first line of stdin).
	ReadSecret func(prompt string) (string, error)
}

// app is one invocation: the environment and the options every command takes.
type app struct {
	env     Env
	server  string
	caFile  string
	timeout time.Duration
}

type runFunc func(ctx context.Context, args []string) error

// command is one subcommand; setup registers its flags on fs and returns what runs it.
type command struct {
	name, args, summary string
	hidden              bool
	setup               func(a *app, fs *flag.FlagSet) runFunc
}

func commands() []command {
	return []command{
		{"login", "--server URL", "check a token (stdin or CTXBENCH_TOKEN) and save it", false, setupLogin},
		{"machines", "", "list machines", false, setupMachines},
		{"kernels", "", "list kernels", false, setupKernels},
		{"run", "--machine M --kernel ID[:p=v,...] ...", "start a run (one per machine), --follow it", false, setupRun},
		{"compare", "--machines A,B [--baseline A]", "compare machines' latest results", false, setupCompare},
		{"gate", "--run ID --baseline-run ID | --machine X --baseline-machine Y",
			"exit 1 when a row is significantly slower than the baseline (CI)", false, setupGate},
		{"completion", "bash|zsh|fish", "print a shell completion script", false, setupCompletion},
		{"__complete", "machines|kernels", "names for shell completion", true, setupComplete},
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Main runs `ctxbench args...` and returns the exit code.
func Main(ctx context.Context, env Env, args []string) int {
	err := run(ctx, env, args)
	if err == nil {
		return ExitOK
	}
	var f *failure
	if !errors.As(err, &f) {
		fmt.Fprintf(env.Stderr, "ctxbench: %v\n", oneLine(err.Error()))
	}
	return exitCode(err)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func run(ctx context.Context, env Env, args []string) error {
	a := &app{env: env}
	top := flag.NewFlagSet("ctxbench", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	a.commonFlags(top)
	version := top.Bool("version", false, "print the version and exit")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.usage(env.Stdout)
			return nil
		}
		return usageErrorf("%v (see 'ctxbench help')", err)
	}
	if *version {
		fmt.Fprintln(env.Stdout, "ctxbench", env.Version)
		return nil
	}
	rest := top.Args()
	if len(rest) == 0 {
		a.usage(env.Stderr)
		return usageErrorf("no command given")
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return a.help(rest)
	}
	cmd, ok := findCommand(name)
	if !ok {
		return usageErrorf("unknown command %q (see 'ctxbench help')", name)
	}
	fs := flag.NewFlagSet("ctxbench "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a.commonFlags(fs)
	runCmd := cmd.setup(a, fs)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandUsage(env.Stdout, cmd, fs)
			return nil
		}
		return usageErrorf("%s: %v (see 'ctxbench %s -h')", cmd.name, err, cmd.name)
	}
	return runCmd(ctx, fs.Args())
}

// commonFlags are taken by every command, before or after its name.
func (a *app) commonFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.server, "server", a.server, "server URL (else CTXBENCH_SERVER, else the saved login)")
	fs.StringVar(&a.caFile, "ca-file", a.caFile, "PEM CA to trust for https (else CTXBENCH_CA_FILE, else the saved login)")
	def := a.timeout
	if def == 0 {
		def = 30 * time.Second
	}
	fs.DurationVar(&a.timeout, "timeout", def, "time limit of each request (event streams have none)")
}

func (a *app) usage(w io.Writer) {
	fmt.Fprintln(w, "ctxbench: the ctxbench server's command line (docs/cli.md)")
	fmt.Fprintln(w, "\nusage: ctxbench [--server URL] [--ca-file PEM] <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "  help        help [command]")
	fmt.Fprintln(w, "\nenvironment: CTXBENCH_SERVER, CTXBENCH_TOKEN, CTXBENCH_CA_FILE")
	fmt.Fprintln(w, "exit codes: 0 ok, 1 run failed or gate found a regression, 2 usage, 3 server or connection")
}

func (a *app) help(args []string) error {
	if len(args) == 0 {
		a.usage(a.env.Stdout)
		return nil
	}
	cmd, ok := findCommand(args[0])
	if !ok {
		return usageErrorf("unknown command %q (see 'ctxbench help')", args[0])
	}
	fs := flag.NewFlagSet("ctxbench "+cmd.name, flag.ContinueOnError)
	a.commonFlags(fs)
	cmd.setup(a, fs)
	commandUsage(a.env.Stdout, cmd, fs)
	return nil
}

func commandUsage(w io.Writer, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: ctxbench %s [flags] %s\n\n%s\n\nflags:\n", cmd.name, cmd.args, cmd.summary)
	fs.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s %s\n    \t%s", f.Name, name, usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// flagInfo is what a completion script needs of a flag.
type flagInfo struct {
	name   string
	isBool bool
	usage  string
}

// commandFlags lists a command's flags, by name (completion scripts).
func commandFlags(cmd command) []flagInfo {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	a := &app{}
	a.commonFlags(fs)
	cmd.setup(a, fs)
	var out []flagInfo
	fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		out = append(out, flagInfo{f.Name, ok && b.IsBoolFlag(), f.Usage})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// connect builds the client: --server, else CTXBENCH_SERVER, else the saved login. The saved token
// and CA go only to the server they were saved for; CTXBENCH_TOKEN goes to whichever is used.
func (a *app) connect() (*Client, error) {
	path, err := configPath(a.env.Getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	server := firstOf(a.server, a.env.Getenv("CTXBENCH_SERVER"), cfg.Server)
	base, err := normaliseServer(server)
	if err != nil {
		return nil, err
	}
	saved := ""
	if cfg.Server != "" {
		saved, _ = normaliseServer(cfg.Server)
	}
	token, caFile := a.env.Getenv("CTXBENCH_TOKEN"), firstOf(a.caFile, a.env.Getenv("CTXBENCH_CA_FILE"))
	if saved == base {
		token = firstOf(token, cfg.Token)
		caFile = firstOf(caFile, cfg.CAFile)
	}
	return newClient(base, strings.TrimSpace(token), caFile, a.timeout)
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// noArgs refuses positional arguments a command does not take.
func noArgs(name string, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s: unexpected argument %q (see 'ctxbench %s -h')", name, args[0], name)
	}
	return nil
}

// listFlag is a flag given several times, each value possibly a comma list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// splitComma splits every value on commas, dropping blanks.
func splitComma(values []string) []string {
	var out []string
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
