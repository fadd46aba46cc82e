package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// completeTimeout bounds the server queries a completion makes: a shell waits on them at each TAB.
const completeTimeout = 2 * time.Second

// Flags whose values complete from the server (machines, kernels) or from a fixed list.
var (
	machineFlags = []string{"machine", "machines", "baseline", "baseline-machine", "bencher-machine"}
	kernelFlags  = []string{"kernel", "kernels"}
	fixedValues  = map[string]string{"profile": "quick default thorough", "format": "table json csv bencher"}
	fileFlags    = []string{"ca-file"}
)

func setupCompletion(a *app, fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return usageErrorf("completion: give one shell: bash, zsh or fish")
		}
		switch args[0] {
		case "bash":
			writeBash(a.env.Stdout)
		case "zsh":
			writeZsh(a.env.Stdout)
		case "fish":
			writeFish(a.env.Stdout)
		default:
			return usageErrorf("completion: unknown shell %q (bash, zsh, fish)", args[0])
		}
		return nil
	}
}

// setupComplete is the hidden `__complete machines|kernels` the scripts call at each TAB.
func setupComplete(a *app, fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 || (args[0] != "machines" && args[0] != "kernels") {
			return usageErrorf("__complete: machines or kernels")
		}
		if a.timeout <= 0 || a.timeout > completeTimeout {
			a.timeout = completeTimeout
		}
		c, err := a.connect()
		if err != nil {
			return err
		}
		var names []string
		if args[0] == "kernels" {
			ks, err := listKernels(ctx, c)
			if err != nil {
				return err
			}
			for _, k := range ks {
				names = append(names, k.ID)
			}
		} else {
			ms, err := listMachines(ctx, c)
			if err != nil {
				return err
			}
			names = machineWords(ms)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(a.env.Stdout, n)
		}
		return nil
	}
}

// machineWords are what completes a machine: its name when that is one word naming it alone, else its id.
func machineWords(ms []Machine) []string {
	count := map[string]int{}
	for _, m := range ms {
		count[m.Name]++
	}
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if count[m.Name] == 1 && m.Name != "" && !strings.ContainsAny(m.Name, " \t\n,'\"\\$`") {
			out = append(out, m.Name)
		} else {
			out = append(out, m.ID)
		}
	}
	return out
}

func visible() []command {
	var out []command
	for _, c := range commands() {
		if !c.hidden {
			out = append(out, c)
		}
	}
	return out
}

func commandWords() string {
	words := []string{"help"}
	for _, c := range visible() {
		words = append(words, c.name)
	}
	return strings.Join(words, " ")
}

func flagWords(cmd command) string {
	var out []string
	for _, f := range commandFlags(cmd) {
		out = append(out, "--"+f.name)
	}
	return strings.Join(out, " ")
}

func dashed(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return strings.Join(out, "|")
}

func writeBash(w io.Writer) {
	fmt.Fprintf(w, `# ctxbench completion for bash: source <(ctxbench completion bash)
_ctxbench_words() {
    local pre="" word="$cur"
    if [[ $cur == *,* ]]; then pre="${cur%%,*},"; word="${cur##*,}"; fi
    COMPREPLY=( $(compgen -P "$pre" -W "$1" -- "$word") )
}
_ctxbench() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i
    for ((i=1; i<COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --server|--ca-file|--timeout) ((i++)) ;;
            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; break ;;
        esac
    done
    case "$prev" in
        %s) _ctxbench_words "$(ctxbench __complete machines 2>/dev/null)"; return ;;
        %s) _ctxbench_words "$(ctxbench __complete kernels 2>/dev/null)"; return ;;
        %s) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
`, dashed(machineFlags), dashed(kernelFlags), dashed(fileFlags))
	for _, name := range sortedKeys(fixedValues) {
		fmt.Fprintf(w, "        --%s) COMPREPLY=( $(compgen -W %q -- \"$cur\") ); return ;;\n", name, fixedValues[name])
	}
	fmt.Fprintf(w, "        --server|--timeout) return ;;\n    esac\n    local words\n    case \"$cmd\" in\n")
	fmt.Fprintf(w, "        \"\") words=%q ;;\n", commandWords()+" --server --ca-file --timeout --version")
	fmt.Fprintf(w, "        help) words=%q ;;\n", commandWords())
	fmt.Fprintf(w, "        completion) words=\"bash zsh fish\" ;;\n")
	for _, c := range visible() {
		if c.name != "completion" {
			fmt.Fprintf(w, "        %s) words=%q ;;\n", c.name, flagWords(c))
		}
	}
	fmt.Fprint(w, `    esac
    COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -F _ctxbench ctxbench
`)
}

func writeZsh(w io.Writer) {
	fmt.Fprint(w, "#compdef ctxbench\n# ctxbench completion for zsh: source <(ctxbench completion zsh), or save as _ctxbench in $fpath\n")
	fmt.Fprint(w, "_ctxbench() {\n    local -a commands\n    commands=(\n")
	for _, c := range visible() {
		fmt.Fprintf(w, "        %s\n", zshQuote(c.name+":"+c.summary))
	}
	fmt.Fprint(w, `        'help:help [command]'
    )
    local cmd="" i
    for (( i = 2; i < CURRENT; i++ )); do
        case ${words[i]} in
            --server|--ca-file|--timeout) (( i++ )) ;;
            -*) ;;
            *) cmd=${words[i]}; break ;;
        esac
    done
    case ${words[CURRENT-1]} in
`)
	fmt.Fprintf(w, "        %s) compadd -- ${(f)\"$(ctxbench __complete machines 2>/dev/null)\"}; return ;;\n", dashed(machineFlags))
	fmt.Fprintf(w, "        %s) compadd -- ${(f)\"$(ctxbench __complete kernels 2>/dev/null)\"}; return ;;\n", dashed(kernelFlags))
	fmt.Fprintf(w, "        %s) _files; return ;;\n", dashed(fileFlags))
	for _, name := range sortedKeys(fixedValues) {
		fmt.Fprintf(w, "        --%s) compadd -- %s; return ;;\n", name, fixedValues[name])
	}
	fmt.Fprint(w, `        --server|--timeout) return ;;
    esac
    case $cmd in
        "") _describe -t commands 'ctxbench command' commands; compadd -- --server --ca-file --timeout --version ;;
        help) _describe -t commands 'ctxbench command' commands ;;
        completion) compadd -- bash zsh fish ;;
`)
	for _, c := range visible() {
		if c.name != "completion" {
			fmt.Fprintf(w, "        %s) compadd -- %s ;;\n", c.name, flagWords(c))
		}
	}
	fmt.Fprint(w, `    esac
}
if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
    _ctxbench "$@"
else
    compdef _ctxbench ctxbench
fi
`)
}

func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeFish(w io.Writer) {
	fmt.Fprint(w, "# ctxbench completion for fish: ctxbench completion fish | source\ncomplete -c ctxbench -f\n")
	for _, c := range visible() {
		fmt.Fprintf(w, "complete -c ctxbench -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	fmt.Fprint(w, "complete -c ctxbench -n __fish_use_subcommand -a help -d 'help [command]'\n")
	fmt.Fprint(w, "complete -c ctxbench -n __fish_use_subcommand -l version -d 'print the version'\n")
	fmt.Fprint(w, "complete -c ctxbench -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	fmt.Fprintf(w, "complete -c ctxbench -n '__fish_seen_subcommand_from help' -a %s\n", fishQuote(commandWords()))
	for _, c := range visible() {
		for _, f := range commandFlags(c) {
			line := fmt.Sprintf("complete -c ctxbench -n '__fish_seen_subcommand_from %s' -l %s", c.name, f.name)
			switch {
			case f.isBool:
			case contains(machineFlags, f.name):
				line += " -x -a '(ctxbench __complete machines 2>/dev/null)'"
			case contains(kernelFlags, f.name):
				line += " -x -a '(ctxbench __complete kernels 2>/dev/null)'"
			case contains(fileFlags, f.name):
				line += " -r -F"
			case fixedValues[f.name] != "":
				line += " -x -a " + fishQuote(fixedValues[f.name])
			default:
				line += " -x"
			}
			fmt.Fprintf(w, "%s -d %s\n", line, fishQuote(f.usage))
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}
