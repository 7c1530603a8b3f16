# The S3 server of t/s3.bats: s3proxy (Maven Central, org.gaul:s3proxy, its jar-with-dependencies;
# `make s3proxy` fetches it into ~/.m2) on 127.0.0.1 at a free port, its filesystem backend in a
# temporary directory, AWS Signature V4 required with a fixed identity.  Started once per file
# (setup_file), stopped in teardown_file.  Without the jar (or java) each test is skipped with
# S3_ABSENT (t/run counts those); with CI=true it fails instead.
S3PROXY_VERSION=2.6.0
S3PROXY_JAR=${CKPT_S3PROXY_JAR:-$HOME/.m2/repository/org/gaul/s3proxy/$S3PROXY_VERSION/s3proxy-$S3PROXY_VERSION-jar-with-dependencies.jar}
S3_ABSENT="no s3proxy (make s3proxy)"
S3_ID=ckpt-test
S3_SECRET=ckpt-test-secret

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# s3_serve DIR: the server started (its pid in DIR/pid, its log in DIR/log, its data in DIR/data) and
# answering (at most 120 s: java starts slowly on a loaded machine), its address in DIR/endpoint.
# Plain sh, so that t/bench/s3.sh starts the same server.
s3_serve() {
	local port i
	mkdir -p "$1/data"
	port=$(free_port)
	cat >"$1/s3proxy.properties" <<EOP
s3proxy.endpoint=http://127.0.0.1:$port
s3proxy.authorization=aws-v4
s3proxy.identity=$S3_ID
s3proxy.credential=$S3_SECRET
jclouds.provider=filesystem
jclouds.filesystem.basedir=$1/data
EOP
	# 3>&-: bats waits for whatever holds its descriptor 3; a server must not
	java -jar "$S3PROXY_JAR" --properties "$1/s3proxy.properties" >"$1/log" 2>&1 3>&- &
	echo $! >"$1/pid"
	for i in $(seq 600); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && break
		kill -0 "$(cat "$1/pid")" 2>/dev/null || { cat "$1/log" >&2; return 1; }
		sleep 0.2
	done
	echo "http://127.0.0.1:$port" >"$1/endpoint"
}

# s3_start: the server of this file, when there is one (setup_file).
s3_start() {
	[ -f "$S3PROXY_JAR" ] && command -v java >/dev/null || return 0
	s3_serve "$BATS_FILE_TMPDIR/s3proxy"
}

s3_stop() {
	local d=$BATS_FILE_TMPDIR/s3proxy
	[ -f "$d/pid" ] && kill "$(cat "$d/pid")" 2>/dev/null
	[ -f "$d/proxy.pid" ] && kill "$(cat "$d/proxy.pid")" 2>/dev/null || true
	return 0
}

# needs_s3: skip without the server (fail under CI=true); else the AWS environment pointed at it,
# and the user's own ~/.aws out of the way.
needs_s3() {
	local d=$BATS_FILE_TMPDIR/s3proxy
	if [ ! -f "$d/endpoint" ]; then
		if [ "${CI-}" = true ]; then
			echo "$S3_ABSENT; CI=true requires it"
			return 1
		fi
		skip "$S3_ABSENT"
	fi
	s3_env "$(cat "$d/endpoint")" "$BATS_TEST_TMPDIR"
}

# s3_env ENDPOINT DIR: S3_ENDPOINT and the AWS environment pointed at the server, the user's own
# ~/.aws out of the way (files under DIR that do not exist in their place).
s3_env() {
	S3_ENDPOINT=$1
	export AWS_ACCESS_KEY_ID=$S3_ID AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
	export AWS_ENDPOINT_URL=$S3_ENDPOINT
	export AWS_SHARED_CREDENTIALS_FILE=$2/no-credentials AWS_CONFIG_FILE=$2/no-config
	unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3 CKPT_S3_PART CKPT_S3_ADDRESSING
}

# s3curl ARGS...: curl signed for the server (path-style URLs under $S3_ENDPOINT).
s3curl() {
	curl -sS --fail-with-body --aws-sigv4 aws:amz:us-east-1:s3 --user "$S3_ID:$S3_SECRET" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

# s3_bucket NAME: a new bucket.
s3_bucket() {
	s3curl -X PUT -o /dev/null "$S3_ENDPOINT/$1" 2>/dev/null || s3curl -I -o /dev/null "$S3_ENDPOINT/$1"
}

# s3_put_dir DIR BUCKET/PREFIX: every file of DIR uploaded under the prefix.
s3_put_dir() {
	local f
	for f in "$1"/*; do
		[ -f "$f" ] && s3curl -o /dev/null -T "$f" "$S3_ENDPOINT/$2/${f##*/}"
	done
}

# s3_keys BUCKET PREFIX: the keys under the prefix, one a line, sorted (directory markers left out).
s3_keys() {
	s3curl "$S3_ENDPOINT/$1?list-type=2&prefix=$(printf %s "$2" | jq -sRr @uri)" |
		grep -o '<Key>[^<]*</Key>' | sed 's/<Key>\(.*\)<\/Key>/\1/' | grep -v '/$' | sort || true
}

# s3_fault ARGS...: the fault-injecting proxy (t/s3-fault.py) in front of the server, the
# environment pointed at it.
s3_fault() {
	local d=$BATS_FILE_TMPDIR/s3proxy port
	port=$(free_port)
	python3 "$T/s3-fault.py" "$port" "$S3_ENDPOINT" "$@" >"$BATS_TEST_TMPDIR/fault.log" 2>&1 3>&- &
	echo $! >"$d/proxy.pid"
	for i in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$port/ping" && break
		sleep 0.1
	done
	export AWS_ENDPOINT_URL=http://127.0.0.1:$port
}

s3_fault_stop() {
	local d=$BATS_FILE_TMPDIR/s3proxy
	[ -f "$d/proxy.pid" ] && kill "$(cat "$d/proxy.pid")" 2>/dev/null || true
	rm -f "$d/proxy.pid"
	export AWS_ENDPOINT_URL=$S3_ENDPOINT
}
