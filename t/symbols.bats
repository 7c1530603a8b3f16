#!/usr/bin/env bats
# make symbols: every external symbol of libckpt starts with ckpt_, in the plain and the sanitized
# build alike. What AddressSanitizer adds for a global variable NAME (gcc 12's __odr_asan.NAME) is
# judged by NAME: skipped for a ckpt_ variable, refused for any other.

load helper

# symbols OBJ...: `make symbols` over the objects OBJ (absolute paths) instead of the library's; a
# make of its own (under `make test`, the outer make's flags and jobserver stay out of it).
symbols() {
	run --separate-stderr env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$ROOT" --no-print-directory symbols SYMBOLS_OBJ="$*"
}

# cc_object NAME SOURCE [FLAGS...]: compile SOURCE (C text) to NAME.o in the test's directory.
cc_object() {
	local name=$1 src=$2
	shift 2
	printf '%s\n' "$src" > "$name.c"
	"${CC:-cc}" "$@" -c -o "$BATS_TEST_TMPDIR/$name.o" "$name.c"
}

@test "symbols: the library's objects of the build under test" {
	case ${CKPT_BIN:-$ROOT/bin} in
	"$ROOT/bin") obj=$ROOT/build/plain/obj ;;
	"$ROOT/build/san/bin") obj=$ROOT/build/san/obj ;;
	*) skip "CKPT_BIN is not a build of this tree" ;;
	esac
	symbols $(find "$obj/lib" -name '*.o' | sort)
	status_is 0
	output_is "symbols: every external symbol of libckpt starts with ckpt_"
}

@test "symbols: a sanitizer's symbol for a ckpt_ variable passes; a planted name fails, sanitized or not" {
	cc_object ok 'int ckpt_counter = 1; int ckpt_count(void) { return ckpt_counter++; }' -fsanitize=address,undefined
	if ! nm -g --defined-only ok.o | grep -q ' __odr_asan[._]'; then
		skip "${CC:-cc} adds no ODR indicator under ASan"
	fi
	symbols "$BATS_TEST_TMPDIR/ok.o"
	status_is 0
	output_is "symbols: every external symbol of libckpt starts with ckpt_"
	# a global variable without the prefix: its own symbol and its indicator name it once
	cc_object stray 'int stray = 1; int ckpt_stray(void) { return stray++; }' -fsanitize=address,undefined
	nm -g --defined-only stray.o | grep -q ' __odr_asan[._]stray$'
	symbols "$BATS_TEST_TMPDIR/ok.o" "$BATS_TEST_TMPDIR/stray.o"
	[ "$status" -ne 0 ]
	[ "${stderr%%$'\n'*}" = "libckpt exports symbols without the ckpt_ prefix: stray" ]
	[ -z "$output" ]
	# a function without the prefix, in a plain object
	cc_object planted 'int planted(void); int planted(void) { return 0; }'
	symbols "$BATS_TEST_TMPDIR/ok.o" "$BATS_TEST_TMPDIR/planted.o"
	[ "$status" -ne 0 ]
	[ "${stderr%%$'\n'*}" = "libckpt exports symbols without the ckpt_ prefix: planted" ]
}
