package main

import (
	"errors"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"recon/extract/webhook"
)

func (a *app) webhookCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Receive the server API's payment notifications",
		Example: `  recon webhook serve --addr 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem
  recon webhook serve --help`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var certFile, keyFile string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Receive webhook deliveries into the spool until stopped (a long-running daemon)",
		Long: `serve answers the server API's notification deliveries: POST /webhook/<token> with
the body {"msg_id": "<uuid>"}. Each msg_id is appended to the spool, one JSON line
{"msg_id", "received_at", "remote"}, and the answer 200 comes only once the line is
on disk (fsync). Deliveries waiting together share one write and one fsync.
Duplicates are accepted and spooled again: runs count them. Each run reads the
spool from where the last published run stopped and fetches the full notifications.

Answers: 403 for a source address outside --allow (RECON_WEBHOOK_ALLOW, default
loopback only), 404 for a wrong path token (RECON_WEBHOOK_TOKEN, variable or config
file only, at least 16 characters), 405 for a method other than POST, 413 for a body
over 4 KiB, 400 for a body that is not {"msg_id": "<uuid>"}, 503 if the spool cannot
be written (the provider retries every 5 minutes, 12 times). Nothing is spooled for
any of these. One log line per delivery: msg_id, status, remote, duration; never
the token.

The source address is the TCP peer's (forwarding headers are ignored): behind a
proxy, allow the proxy's address and restrict sources at the proxy.

SIGTERM or Ctrl-C stops accepting, lets the deliveries in flight finish (their
fsync included) and exits 0.`,
		Example: `  export RECON_WEBHOOK_TOKEN=$(openssl rand -hex 32)
  recon webhook serve --addr 0.0.0.0:8443 --tls-cert /etc/recon/tls/cert.pem \
      --tls-key /etc/recon/tls/key.pem --allow 203.0.113.0/24,198.51.100.7/32
  recon webhook serve --spool /var/lib/recon/recon-webhook.spool   # loopback, no TLS
  curl -d '{"msg_id":"8f6d3f3e-2b1c-4c8e-9a53-2f0e6f1d2c4b"}' \
      http://127.0.0.1:8090/webhook/$RECON_WEBHOOK_TOKEN`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, addr, err := a.decodeWebhook(a.resolve(cmd))
			if err != nil {
				return usageErr("configuration:\n%v", err)
			}
			if (certFile == "") != (keyFile == "") {
				return usageErr("--tls-cert and --tls-key go together")
			}
			rc, err := webhook.New(cfg)
			if errors.Is(err, webhook.ErrConfig) {
				return usageErr("configuration:\n%v", err)
			}
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				rc.Close()
				return fmt.Errorf("listen %s: %w", addr, err)
			}
			a.log.Info("webhook receiver listening", "addr", ln.Addr().String(), "tls", certFile != "",
				"spool", cfg.Spool, "allow", fmt.Sprint(cfg.Allow))
			if err := rc.Serve(cmd.Context(), ln, certFile, keyFile); err != nil {
				return err
			}
			a.log.Info("webhook receiver stopped", "spool", cfg.Spool)
			return nil
		},
	}
	serve.Flags().StringVar(&certFile, "tls-cert", "", "TLS certificate file (PEM, with its chain); serves HTTPS with --tls-key")
	serve.Flags().StringVar(&keyFile, "tls-key", "", "TLS private key file (PEM)")
	addFlags(serve.Flags(), dbSettings, webhookSettings)
	cmd.AddCommand(serve)
	return cmd
}
