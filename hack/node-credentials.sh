#!/usr/bin/env bash
# Mints credentials for one node of the private control plane started by
# control-plane-up.sh, as a cluster's CSR approver would for a kubelet:
#
#   OUTDIR/client.crt, client.key  CN=system:node:NODE_NAME, O=system:nodes,
#                                  so the Node authorizer and NodeRestriction
#                                  apply to the node (it may read only its own
#                                  Node and only its own pods);
#   OUTDIR/kubeconfig              that identity for $CP_APISERVER_URL, the
#                                  certificates embedded;
#   OUTDIR/ca.crt                  the cluster CA (verifies the apiserver, and
#                                  the apiserver's client cert for a node API);
#   OUTDIR/server.crt, server.key  a serving certificate for a node API on
#                                  127.0.0.1 / localhost / NODE_NAME.
#
# Usage: node-credentials.sh NODE_NAME OUTDIR   (prints OUTDIR/kubeconfig)
# Needs the control plane's CA, i.e. a running control-plane-up.sh; calls for
# different nodes may run at once.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=control-plane-lib.sh
. "$here/control-plane-lib.sh"

[ "$#" -eq 2 ] || die "usage: $0 NODE_NAME OUTDIR"
node=$1
out=$2
# A Node name is a DNS subdomain.
[[ ${#node} -le 253 && "$node" =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] ||
	die "node name '$node' is not a lowercase DNS subdomain"
[ -f "$CP_PKI/ca.key" ] || die "no control-plane CA in $CP_PKI: run control-plane-up.sh first"
mkdir -p "$out"
out=$(cd "$out" && pwd)

sign_cert "$CP_PKI/ca" "$out/client" "/O=system:nodes/CN=system:node:$node" \
	"extendedKeyUsage = clientAuth"
sign_cert "$CP_PKI/ca" "$out/server" "/CN=$node" \
	"extendedKeyUsage = serverAuth
subjectAltName = DNS:$node, DNS:localhost, IP:127.0.0.1"
cp "$CP_PKI/ca.crt" "$out/ca.crt"
write_kubeconfig "$out/kubeconfig" "system:node:$node" "$out/client"
echo "$out/kubeconfig"
