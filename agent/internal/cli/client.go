package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

const apiPrefix = "/api/v1"

// Client speaks the REST API (docs/architecture.md "REST shapes") and nothing else.
type Client struct {
	base    string // scheme://host[:port][/prefix], no trailing slash, without /api/v1
	token   string
	http    *http.Client
	timeout time.Duration // per request; event streams have none
}

// APIError is an answer with a status of 400 or more: the server's `detail`, made readable.
type APIError struct {
	Method, Path string
	Status       int
	Detail       string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, e.Detail)
}

func (e *APIError) exitCode() int {
	switch {
	case e.Status == http.StatusUnauthorized, e.Status == http.StatusForbidden,
		e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return ExitServer
	case e.Status >= 400:
		return ExitUsage
	}
	return ExitServer
}

// normaliseServer turns what a person types (`http://host:8080/`, `https://h/api/v1`) into the base URL.
func normaliseServer(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", usageErrorf("no server: give --server URL, set CTXBENCH_SERVER, or run 'ctxbench login'")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usageErrorf("server %q: want an http:// or https:// URL", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", usageErrorf("server %q: want scheme://host[:port][/path] only", raw)
	}
	path := strings.TrimRight(u.Path, "/")
	path = strings.TrimSuffix(path, apiPrefix)
	return u.Scheme + "://" + u.Host + strings.TrimRight(path, "/"), nil
}

// newClient builds a client for one server; caFile trusts a private CA for https.
func newClient(server, token, caFile string, timeout time.Duration) (*Client, error) {
	base, err := normaliseServer(server)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, usageErrorf("read CA file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usageErrorf("CA file %s: no PEM certificate in it", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &Client{base: base, token: token, http: &http.Client{Transport: tr}, timeout: timeout}, nil
}

func (c *Client) url(path string, q url.Values) string {
	u := c.base + apiPrefix + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// request sends one request and returns the body of a 2xx answer; anything else is an *APIError or a
// connection error (exit 3).
func (c *Client) request(ctx context.Context, method, path string, q url.Values, body any) ([]byte, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := c.send(ctx, method, path, q, body, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, serverErrorf("read answer of %s %s: %v", method, apiPrefix+path, err)
	}
	if resp.StatusCode >= 400 {
		return nil, &APIError{method, apiPrefix + path, resp.StatusCode, detail(data, resp.Status)}
	}
	return data, nil
}

func (c *Client) send(
	ctx context.Context, method, path string, q url.Values, body any, accept string,
) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path, q), rd)
	if err != nil {
		return nil, usageErrorf("build request: %v", err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "ctxbench-cli")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, &exitError{ExitInterrup, errors.New("interrupted")}
		}
		return nil, serverErrorf("reach %s: %v", c.base, unwrapURLError(err))
	}
	return resp, nil
}

// unwrapURLError drops url.Error's `Get "http://...":` prefix: the message names the server already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// getJSON decodes a 2xx answer into out.
func (c *Client) getJSON(ctx context.Context, path string, q url.Values, out any) error {
	data, err := c.request(ctx, http.MethodGet, path, q, nil)
	if err != nil {
		return err
	}
	return decode(data, "GET "+apiPrefix+path, out)
}

func decode(data []byte, what string, out any) error {
	if err := json.Unmarshal(data, out); err != nil {
		return serverErrorf("decode answer of %s: %v", what, err)
	}
	return nil
}

// detail renders FastAPI's `{"detail": ...}` on one line: a string as it is, a validation list as
// `loc: msg; loc: msg`, anything else as compact JSON; a body that is not JSON by its status line.
func detail(body []byte, status string) string {
	var env struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Detail) == 0 {
		text := strings.TrimSpace(string(body))
		if text == "" || len(text) > 200 || strings.ContainsAny(text, "<\n") {
			return strings.TrimSpace(strings.TrimLeft(status, "0123456789"))
		}
		return text
	}
	var s string
	if json.Unmarshal(env.Detail, &s) == nil {
		return s
	}
	var list []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(env.Detail, &list) == nil && len(list) > 0 {
		parts := make([]string, 0, len(list))
		for _, e := range list {
			loc := make([]string, 0, len(e.Loc))
			for _, l := range e.Loc {
				loc = append(loc, fmt.Sprint(l))
			}
			parts = append(parts, strings.Join(loc, ".")+": "+e.Msg)
		}
		return strings.Join(parts, "; ")
	}
	return string(env.Detail)
}
