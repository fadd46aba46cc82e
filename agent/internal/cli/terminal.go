package cli

import (
	"bufio"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// TerminalSecret returns a ReadSecret for a terminal stdin: it prompts on stderr and reads a line with
// echo off, so a token typed or pasted is not shown (nor left in the scrollback).
func TerminalSecret(in *os.File, prompt *os.File) func(string) (string, error) {
	return func(text string) (string, error) {
		fd := int(in.Fd())
		old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return "", fmt.Errorf("read terminal settings: %w", err)
		}
		quiet := *old
		quiet.Lflag &^= unix.ECHO
		quiet.Lflag |= unix.ICANON | unix.ECHONL
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
			return "", fmt.Errorf("turn echo off: %w", err)
		}
		defer unix.IoctlSetTermios(fd, unix.TCSETS, old) //nolint:errcheck // best effort on the way out
		fmt.Fprint(prompt, text)
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && line == "" {
			return "", fmt.Errorf("read token: %w", err)
		}
		return line, nil
	}
}
