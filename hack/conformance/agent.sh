# shellcheck shell=bash
# The agent under test, sourced by lab-up.sh after lib.sh:
#
#   agent_ports AGENT   prints the ports the API server must reach (REDIRECT);
#   agent_start AGENT   starts it detached, logging to $CONF_DIR/agent.log.
#
# AGENT is "kubelet" (the upstream kubelet v$KUBE_VERSION, the reference) or a
# nodekit binary. nodekit's flags are read from its `run --help`, so the
# harness passes whatever this binary supports: a TLS --secure-port when it
# has one (with the node's serving certificate and the cluster CA for client
# certificates), else its plain --port as the node's daemon endpoint.

agent_help() { "$1" run --help 2>&1 || true; }
agent_has_flag() { [[ "$2" == *"--$1 "* || "$2" == *"--$1="* ]]; }

agent_ports() {
	if [ "$1" = kubelet ]; then
		echo "$CONF_AGENT_PORT"
		return
	fi
	local help
	help=$(agent_help "$1")
	if agent_has_flag secure-port "$help"; then
		echo "$CONF_AGENT_PORT $CONF_AGENT_RO_PORT"
	else
		echo "$CONF_AGENT_PORT"
	fi
}

# cgroup_root_create makes /$CGROUP_PARENT in every cgroup v1 hierarchy (and
# v2 if mounted there): the kubelet refuses a --cgroup-root that does not
# exist. hack/containerd-down.sh removes them.
cgroup_root_create() {
	local h
	for h in /sys/fs/cgroup/*/; do
		[ -d "$h" ] && [ ! -L "${h%/}" ] || continue
		mkdir -p "$h$CGROUP_PARENT"
	done
}

kubelet_config() {
	local node=$CONF_DIR/node
	cat <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_PARENT
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
containerRuntimeEndpoint: unix://$CD_SOCK
address: 127.0.0.1
port: $CONF_AGENT_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $CONF_AGENT_HEALTHZ_PORT
tlsCertFile: $node/server.crt
tlsPrivateKeyFile: $node/server.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $node/ca.crt}
authorization:
  mode: AlwaysAllow
failSwapOn: false
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
evictionHard:
  memory.available: 100Mi
  nodefs.available: 2%
  imagefs.available: 2%
imageGCHighThresholdPercent: 98
imageGCLowThresholdPercent: 95
serializeImagePulls: false
registerNode: true
YAML
}

agent_start() {
	local agent=$1 root=$CONF_DIR/agent node=$CONF_DIR/node args=()
	mkdir -p "$root"
	cgroup_root_create
	if [ "$agent" = kubelet ]; then
		kubelet_config >"$root/kubelet-config.yaml"
		args=("$CONF_KUBELET_BIN" --config="$root/kubelet-config.yaml"
			--kubeconfig="$node/kubeconfig" --root-dir="$root/root"
			--hostname-override="$CONF_NODE_NAME" --node-ip="$CONF_NODE_IP" --v=2)
	else
		local help
		help=$(agent_help "$agent")
		agent_has_flag kubeconfig "$help" || die "$agent run has no --kubeconfig flag: is it a nodekit binary?"
		args=("$agent" run --kubeconfig="$node/kubeconfig" --node-name="$CONF_NODE_NAME"
			--node-ip="$CONF_NODE_IP" --runtime-endpoint="unix://$CD_SOCK"
			--root-dir="$root/root" --cgroup-root="/$CGROUP_PARENT" --address=127.0.0.1 --v=2)
		if agent_has_flag secure-port "$help"; then
			args+=(--secure-port="$CONF_AGENT_PORT")
			agent_has_flag read-only-port "$help" && args+=(--read-only-port="$CONF_AGENT_RO_PORT")
			agent_has_flag read-only-port "$help" || { agent_has_flag port "$help" && args+=(--port="$CONF_AGENT_RO_PORT"); }
			agent_has_flag tls-cert-file "$help" && args+=(--tls-cert-file="$node/server.crt")
			agent_has_flag tls-private-key-file "$help" && args+=(--tls-private-key-file="$node/server.key")
			agent_has_flag client-ca-file "$help" && args+=(--client-ca-file="$node/ca.crt")
		else
			args+=(--port="$CONF_AGENT_PORT")
		fi
		agent_has_flag healthz-port "$help" && args+=(--healthz-port="$CONF_AGENT_HEALTHZ_PORT")
	fi
	printf '%q ' "${args[@]}" >"$CONF_DIR/agent.cmdline"
	echo >>"$CONF_DIR/agent.cmdline"
	clog "starting agent: ${args[*]}"
	spawn_bg "$CONF_DIR/agent.log" "${args[@]}"
}
