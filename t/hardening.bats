#!/usr/bin/env bats
# Regressions found by fuzzing (t/fuzz/regress/<target>/): each input once crashed, leaked or
# hung a reader; now it is refused cleanly with one line (exit 2).  Under SANITIZE=1 ASan and
# LSan watch the same runs.

load helper

REG=$T/fuzz/regress

@test "regress: _metadata whose operator state offsets lie outside the stream (heap overflow)" {
	cp "$REG/flinkmeta/opstate-offsets-outside-stream" _metadata
	bad 2 'ckpt-inspect: _metadata: offset 1454: unknown keyed state handle tag 253' ckpt-inspect _metadata
	bad 2 'ckpt-inspect: _metadata: offset 1454: unknown keyed state handle tag 253' ckpt-inspect -a _metadata
}

@test "regress: _metadata with a Java field of a bad type after its name (leak)" {
	cp "$REG/flinkmeta/java-field-type-bad-after-name" _metadata
	bad 2 'ckpt-inspect: _metadata: offset 805: damaged Java serialization stream: byte 0x67 where a token (0x70 to 0x7e) belongs' ckpt-inspect _metadata
}

@test "regress: _metadata with an operator state handle of no offsets (qsort of NULL, UBSan)" {
	cp "$REG/flinkmeta/opstate-no-offsets-qsort-null" _metadata
	bad 2 'ckpt-inspect: _metadata: offset 73: invalid raw_operator state flag 28313088 (0 or 1 expected)' ckpt-inspect _metadata
}

@test "regress: a zip whose first member has no name (strcmp of NULL, UBSan)" {
	cp "$REG/archive/unnamed-member.zip" z.zip
	bad 2 "ckpt-inspect: z.zip: unreadable archive: a member without a name" ckpt-inspect z.zip
}
