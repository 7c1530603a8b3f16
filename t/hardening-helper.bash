# Shared by the hardening tests (limits, catalogue, writers, regressions).

# Run a command under a 512 MiB address-space limit, so that allocating what the input
# claims (gigabytes) would fail loudly; ASan reserves terabytes of shadow, so its builds
# run unlimited (the sanitizer itself then reports huge allocations).
run_lowmem() {
	case ${CKPT_BIN:-} in
	*/san/*) run "$@" ;;
	*) run sh -c 'ulimit -v 524288 && exec "$@"' sh "$@" ;;
	esac
}

# bad STATUS LINE COMMAND...: the command exits STATUS and prints exactly LINE (and nothing on stdout).
bad() {
	local want_status=$1 want=$2
	shift 2
	run "$@"
	status_is "$want_status"
	output_is "$want"
}
