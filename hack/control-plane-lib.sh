# shellcheck shell=bash
# Helpers shared by control-plane-up.sh, control-plane-down.sh and
# node-credentials.sh (sourced after lib.sh): finding our etcd and
# kube-apiserver processes, serialising the scripts, and minting certificates.

# ---- processes ----

# private_etcd_pids prints the pids of etcd servers using $CP_ETCD_DATA (a
# path private to this test dir); no other etcd on the machine matches.
private_etcd_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cmdline_args "$p"
		if [ "${#ARGS[@]}" -gt 0 ] && [ "${ARGS[0]##*/}" = etcd ] && has_flag data-dir "$CP_ETCD_DATA"; then
			echo "$p"
		fi
	done
	return 0
}

# private_apiserver_pids prints the pids of kube-apiservers serving with our
# certificate ($CP_PKI/apiserver.crt); no other apiserver matches.
private_apiserver_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cmdline_args "$p"
		if [ "${#ARGS[@]}" -gt 0 ] && [ "${ARGS[0]##*/}" = kube-apiserver ] &&
			has_flag tls-cert-file "$CP_PKI/apiserver.crt"; then
			echo "$p"
		fi
	done
	return 0
}

# pid_file_pid FILE FINDER prints the pid recorded in FILE if the process
# still runs and FINDER (one of the functions above) lists it, so a stale
# file whose pid was reused by another program is ignored.
pid_file_pid() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 0
	[[ "$pid" =~ ^[0-9]+$ ]] || return 0
	# grep without -q reads all input: no SIGPIPE for the finder.
	"$2" | grep -x "$pid" >/dev/null && echo "$pid"
	return 0
}

# alive PID... succeeds while any PID is a live (non-zombie) process.
alive() {
	local p stat
	for p in "$@"; do
		stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		stat=${stat##*) }
		[ "${stat%% *}" = Z ] || return 0
	done
	return 1
}

# stop_pids NAME PID... sends TERM, waits up to 15 s, then KILLs.
stop_pids() {
	local name=$1 deadline=$((SECONDS + 15))
	shift
	[ "$#" -gt 0 ] || return 0
	log "stopping $name (pid $*)"
	kill -TERM "$@" 2>/dev/null || true
	while alive "$@"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			log "$name ignored TERM for 15s; killing it"
			kill -KILL "$@" 2>/dev/null || true
			sleep 0.5
			alive "$@" && die "$name (pid $*) survives SIGKILL"
			break
		fi
		sleep 0.1
	done
	return 0
}

# ---- locking ----

# cp_lock serialises the control-plane scripts on one NODEKIT_TEST_DIR with
# their own lock (not containerd's: both may start at once). A script called
# by one that holds it inherits it.
cp_lock() {
	[ -n "${NODEKIT_CP_LOCKED:-}" ] && return
	mkdir -p "$NODEKIT_TEST_DIR"
	exec 8>"$NODEKIT_TEST_DIR/.control-plane.lock"
	flock -w 120 8 || die "another control-plane script holds $NODEKIT_TEST_DIR/.control-plane.lock for 2 minutes"
	export NODEKIT_CP_LOCKED=1
}

# ---- certificates ----

# new_key FILE writes a P-256 private key (instant, unlike RSA).
new_key() {
	(umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null) ||
		die "openssl cannot create key $1"
}

# sign_cert CA_PREFIX OUT_PREFIX SUBJECT EXTENSIONS writes OUT_PREFIX.key and
# OUT_PREFIX.crt (valid one year) signed by CA_PREFIX.{crt,key}. EXTENSIONS
# are openssl x509v3 lines, e.g. "extendedKeyUsage = clientAuth". A random
# serial (no serial file) lets two calls sign at once.
sign_cert() {
	local ca=$1 out=$2 subj=$3 ext=$4
	new_key "$out.key"
	openssl req -new -key "$out.key" -subj "$subj" 2>/dev/null |
		openssl x509 -req -CA "$ca.crt" -CAkey "$ca.key" -set_serial "0x$(openssl rand -hex 16)" -days 365 -sha256 \
			-extfile <(printf 'basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\n%s\n' "$ext") \
			-out "$out.crt" 2>/dev/null || die "openssl cannot sign $out.crt"
}

# new_ca PREFIX CN writes a self-signed CA PREFIX.{key,crt} valid one year.
new_ca() {
	new_key "$1.key"
	openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 365 -sha256 \
		-addext "basicConstraints = critical, CA:TRUE" \
		-addext "keyUsage = critical, keyCertSign, cRLSign, digitalSignature" \
		-out "$1.crt" 2>/dev/null || die "openssl cannot create CA $1.crt"
}

# write_kubeconfig OUT USER CLIENT_PREFIX writes a kubeconfig for
# $CP_APISERVER_URL with the client certificate and key embedded, so it stays
# valid wherever it is copied.
write_kubeconfig() {
	local out=$1 user=$2 client=$3
	(
		umask 077
		cat >"$out.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: nodekit-test
  cluster:
    server: $CP_APISERVER_URL
    certificate-authority-data: $(base64 -w0 <"$CP_PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 <"$client.crt")
    client-key-data: $(base64 -w0 <"$client.key")
contexts:
- name: $user@nodekit-test
  context:
    cluster: nodekit-test
    user: $user
current-context: $user@nodekit-test
EOF
	) || die "cannot write $out.tmp"
	mv -f "$out.tmp" "$out" || die "cannot write $out"
}
