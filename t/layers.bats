#!/usr/bin/env bats
# make layers (.ci/layers): the folders of lib/ are layers (lib/README's table), and every #include
# and every call between them goes down.  Faults are planted in a copy of lib/.
load helper

layers() {
	sh "$ROOT/.ci/layers" "$@"
}

# A copy of the tree's lib/ (sources, headers, README) to plant a fault in.
copy_lib() {
	mkdir -p tree && cp -R "$ROOT/lib" tree/
}

# plant FILE LINE TEXT: TEXT becomes line LINE of tree/lib/FILE.
plant() {
	sed -i "$2i\\
$3" "tree/lib/$1"
}

# long_exceptions: no line but the last of $output, or a layer still in circles (lib/README's
# CIRCLES): lib/README's list of long files is empty (it only shrinks; lib/flink/state.c, its last,
# was split).
long_exceptions() {
	local l
	for l in "${lines[@]:0:${#lines[@]}-1}"; do
		[[ $l =~ ^layers:\ lib/[a-z/]+/:\ [0-9]+\ files\ that\ call\ one\ another\ in\ circles:\ an\ exception ]] || return 1
	done
}

@test "layers: the tree holds, includes and (from the built objects) calls" {
	run layers -C "$ROOT"
	status_is 0
	long_exceptions
	[ ${#lines[@]} -eq 1 ]
	[[ ${lines[-1]} =~ ^layers:\ 11\ layers,\ [0-9]+\ files\;\ [0-9]+\ includes\ and\ 0\ calls\ between\ layers,\ all\ downward\;\ 0\ calls\ between\ files,\ no\ circle$ ]]
	# the objects of the sources there are (a build from before a file moved keeps its old object)
	objs=$(cd "$ROOT" && find lib -name '*.c' | sed 's|^|build/plain/obj/|; s|\.c$|.o|' | sort)
	(cd "$ROOT" && ls $objs >/dev/null 2>&1) || skip "the library is not built"
	objs=$(printf "$ROOT/%s\n" $objs)
	run layers -C "$ROOT" $objs
	status_is 0
	# no layer holds a circle any more, engine/ neither (issue 39): lib/README lists none, none is excepted
	[ ${#lines[@]} -eq 1 ]
	[[ ${lines[-1]} =~ ^layers:\ 11\ layers,\ [0-9]+\ files\;\ [0-9]+\ includes\ and\ [1-9][0-9]+\ calls\ between\ layers,\ all\ downward\;\ [1-9][0-9]+\ calls\ between\ files,\ no\ circle$ ]]
}

@test "layers: an upward #include fails, named by file and line" {
	copy_lib
	run layers -C tree
	status_is 0
	plant base/err.c 2 '#include "engine/engine.h"'
	bad 1 'layers: lib/base/err.c:2: #include "engine/engine.h": layer engine is above base' layers -C tree
}

@test "layers: an #include of a layer below that the table does not name fails" {
	copy_lib
	plant evlog/parse.c 3 '#include "snap/snap.h"'
	bad 1 'layers: lib/evlog/parse.c:3: #include "snap/snap.h": layer evlog does not name snap among the layers it uses (lib/README)' layers -C tree
}

@test "layers: another layer is included through its one header" {
	copy_lib
	plant evlog/parse.c 3 '#include "base/json-scan.h"'
	bad 1 'layers: lib/evlog/parse.c:3: #include "base/json-scan.h": another layer is used through its one header, base/base.h' layers -C tree
}

@test "layers: a file at lib/'s top, or in a folder the table does not name, fails" {
	copy_lib
	echo '#include "base/base.h"' > tree/lib/flink-changelog.c
	bad 1 "layers: lib/flink-changelog.c: a file at the top of lib/, where only ckpt.h (the public API) belongs: move it into the folder of its layer (lib/README)" layers -C tree
	rm tree/lib/flink-changelog.c
	mkdir tree/lib/rocksdb && echo '#include "base/base.h"' > tree/lib/rocksdb/sst.c
	bad 1 "layers: lib/rocksdb/: a folder that is not a layer of the table in lib/README" layers -C tree
}

@test "layers: two files of one name in two layers fail (the archive keeps one member a name)" {
	copy_lib
	echo "int ckpt_bits_again;" > tree/lib/graph/bits.c
	bad 1 "layers: lib/graph/bits.c: shares its name with lib/base/bits.c (the static library keeps one member a name)" layers -C tree
}

@test "layers: a call from a lower layer's object into a higher layer's fails, named by symbol" {
	copy_lib
	mkdir -p obj/lib/base obj/lib/engine
	echo 'void ckpt_up(void); void ckpt_down(void); void ckpt_down(void) { ckpt_up(); }' > down.c
	echo 'void ckpt_up(void); void ckpt_up(void) {}' > up.c
	cc -c -o obj/lib/base/down.o down.c && cc -c -o obj/lib/engine/up.o up.c
	run layers -C tree obj/lib/engine/up.o
	status_is 0
	bad 1 'layers: lib/base/down.c: calls ckpt_up of lib/engine/up.c: layer engine is above base' \
		layers -C tree obj/lib/base/down.o obj/lib/engine/up.o
}

# Issue 39: lib/flink/ is three floors (format, types, state), each a layer of the table named by
# its path; the layers above use them through flink/flink.h.
@test "layers: a floor of flink/ includes a floor above it: fails, named by file and line" {
	copy_lib
	plant flink/format/meta.c 3 '#include "flink/types/types.h"'
	bad 1 'layers: lib/flink/format/meta.c:3: #include "flink/types/types.h": layer flink/types is above flink/format' layers -C tree
}

@test "layers: a layer above flink/ uses its floors through flink/flink.h" {
	copy_lib
	plant snap/open.c 3 '#include "flink/state/state.h"'
	bad 1 'layers: lib/snap/open.c:3: #include "flink/state/state.h": another layer is used through its one header, flink/flink.h' layers -C tree
}

@test "layers: a call from a floor into a floor above fails; a folder of flink/ the table does not name fails" {
	copy_lib
	mkdir -p obj/lib/flink/format obj/lib/flink/state
	echo 'void ckpt_up(void); void ckpt_down(void); void ckpt_down(void) { ckpt_up(); }' > down.c
	echo 'void ckpt_up(void); void ckpt_up(void) {}' > up.c
	cc -c -o obj/lib/flink/format/down.o down.c && cc -c -o obj/lib/flink/state/up.o up.c
	bad 1 'layers: lib/flink/format/down.c: calls ckpt_up of lib/flink/state/up.c: layer flink/state is above flink/format' \
		layers -C tree obj/lib/flink/format/down.o obj/lib/flink/state/up.o
	mkdir tree/lib/flink/kafka && echo '#include "base/base.h"' > tree/lib/flink/kafka/split.c
	bad 1 "layers: lib/flink/kafka/: a folder that is not a layer of the table in lib/README" layers -C tree
}

@test "layers: the table's own faults: a use of a layer above" {
	copy_lib
	sed -i 's/^graph   uses base$/graph   uses model base/' tree/lib/README
	bad 1 "layers: lib/README: layer graph uses model, which is not below it" layers -C tree
}

# longfile FILE N: tree/lib/FILE, N lines of C.
longfile() {
	seq "$2" | sed 's/.*/int ckpt_long_&;/' > "tree/lib/$1"
}

@test "layers: a .c of lib/ over 1,200 lines fails, named with its length" {
	copy_lib
	longfile base/long.c 1200
	run layers -C tree
	status_is 0
	echo 'int ckpt_long_more;' >> tree/lib/base/long.c
	bad 1 "layers: lib/base/long.c: 1201 lines, over the 1200 a file of lib/ may hold: split it where its concerns part (lib/README)" layers -C tree
}

# longfunc FILE NAME N: tree/lib/FILE, a function NAME of N lines from its name to its brace.
longfunc() {
	{
		echo 'int'
		echo "$2(void)"
		echo '{'
		echo '	int n = 0;'
		echo
		seq $(($3 - 6)) | sed 's/.*/	n += &;/'
		echo '	return n;'
		echo '}'
	} > "tree/lib/$1"
}

@test "layers: a function of lib/ over 80 lines fails, named with its file, line and length" {
	copy_lib
	longfunc base/longfn.c ckpt_longfn 80
	run layers -C tree
	status_is 0
	longfunc base/longfn.c ckpt_longfn 81
	bad 1 "layers: lib/base/longfn.c:2: ckpt_longfn() holds 81 lines, over the 80 a function of lib/ may hold: split it (lib/README)" layers -C tree
	# static, after another function, its type on the line before: the same
	{ echo 'static int'; echo 'f(int x)'; echo '{'; echo '	return x;'; echo '}'; echo; } > tree/lib/snap/first.c
	longfunc snap/second.c g 90
	cat tree/lib/snap/second.c >> tree/lib/snap/first.c
	rm tree/lib/snap/second.c tree/lib/base/longfn.c
	bad 1 "layers: lib/snap/first.c:8: g() holds 90 lines, over the 80 a function of lib/ may hold: split it (lib/README)" layers -C tree
}

@test "layers: a long file lib/README lists is reported as an exception, until it is no longer long" {
	copy_lib
	longfile snap/long.c 1300
	bad 1 "layers: lib/snap/long.c: 1300 lines, over the 1200 a file of lib/ may hold: split it where its concerns part (lib/README)" layers -C tree
	sed -i '/^LONG FILES$/a snap/long.c     planted' tree/lib/README
	run layers -C tree
	status_is 0
	[[ $'\n'$output$'\n' == *$'\n'"layers: lib/snap/long.c: 1300 lines, over 1200: an exception, listed among the long files in lib/README"$'\n'* ]]
	# the list only shrinks: a listed file split (or gone) fails until it is taken off
	longfile snap/long.c 1200
	bad 1 "layers: lib/README: lib/snap/long.c is listed among the long files, but holds 1200 lines, not over 1200: take it off the list" layers -C tree
	rm tree/lib/snap/long.c
	bad 1 "layers: lib/README: lib/snap/long.c is listed among the long files, but there is no such file" layers -C tree
}

# Issue 39: the calls between the files of lib/ form no circle, inside a layer too.
# obj_of LAYER NAME CODE: tree's object obj/lib/LAYER/NAME.o, built from the C of CODE.
obj_of() {
	mkdir -p "obj/lib/$1"
	echo "$3" > "$2.c"
	cc -c -o "obj/lib/$1/$2.o" "$2.c"
}

# no_circles: tree/lib/README lists no layer still in circles.
no_circles() {
	sed -i '/^CIRCLES$/,$ { /^CIRCLES$/!d }' tree/lib/README
}

@test "layers: a circle of calls between the files of a floor fails, naming its files and one call a step" {
	copy_lib
	no_circles
	obj_of flink/types serializer 'int ckpt_pojo(int); int ckpt_emit(int); int ckpt_emit(int x) { return ckpt_pojo(x); }'
	obj_of flink/types pojo 'int ckpt_emit(int); int ckpt_pojo(int); int ckpt_pojo(int x) { return x ? ckpt_emit(x - 1) : 0; }'
	bad 1 'layers: a circle of calls: lib/flink/types/pojo.c -> lib/flink/types/serializer.c (ckpt_emit) -> lib/flink/types/pojo.c (ckpt_pojo): move what the files below call into a file below them, or give them a callback (lib/README)' \
		layers -C tree obj/lib/flink/types/serializer.o obj/lib/flink/types/pojo.o
	# the reader takes the dispatcher as a callback: no call goes up, no circle
	obj_of flink/types pojo 'int ckpt_pojo(int, int (*)(int)); int ckpt_pojo(int x, int (*emit)(int)) { return x ? emit(x - 1) : 0; }'
	obj_of flink/types serializer 'int ckpt_pojo(int, int (*)(int)); int ckpt_emit(int); int ckpt_emit(int x) { return ckpt_pojo(x, ckpt_emit); }'
	run layers -C tree obj/lib/flink/types/serializer.o obj/lib/flink/types/pojo.o
	status_is 0
	[[ ${lines[-1]} == *"; 1 calls between files, no circle" ]]
}

@test "layers: a circle through three files, each named once; one line a circle" {
	copy_lib
	no_circles
	obj_of base a 'void ckpt_b(void); void ckpt_a(void); void ckpt_a(void) { ckpt_b(); }'
	obj_of base b 'void ckpt_c(void); void ckpt_b(void); void ckpt_b(void) { ckpt_c(); }'
	obj_of base c 'void ckpt_a(void); void ckpt_c(void); void ckpt_c(void) { ckpt_a(); }'
	obj_of graph d 'void ckpt_e(void); void ckpt_d(void); void ckpt_d(void) { ckpt_e(); }'
	obj_of graph e 'void ckpt_d(void); void ckpt_e(void); void ckpt_e(void) { ckpt_d(); }'
	run --separate-stderr layers -C tree obj/lib/base/*.o obj/lib/graph/*.o
	status_is 1
	[ -z "$output" ]
	[ "$stderr" = "layers: a circle of calls: lib/base/a.c -> lib/base/b.c (ckpt_b) -> lib/base/c.c (ckpt_c) -> lib/base/a.c (ckpt_a): move what the files below call into a file below them, or give them a callback (lib/README)
layers: a circle of calls: lib/graph/d.c -> lib/graph/e.c (ckpt_e) -> lib/graph/d.c (ckpt_d): move what the files below call into a file below them, or give them a callback (lib/README)" ]
}

@test "layers: a layer lib/README lists as still in circles is an exception, until it has none" {
	copy_lib
	no_circles
	obj_of graph d 'void ckpt_e(void); void ckpt_d(void); void ckpt_d(void) { ckpt_e(); }'
	obj_of graph e 'void ckpt_d(void); void ckpt_e(void); void ckpt_e(void) { ckpt_d(); }'
	echo 'graph   planted' >> tree/lib/README
	run layers -C tree obj/lib/graph/d.o obj/lib/graph/e.o
	status_is 0
	[ "${lines[0]}" = "layers: lib/graph/: 2 files that call one another in circles: an exception, listed among the layers still in circles in lib/README" ]
	[[ ${lines[1]} == *"; 2 calls between files, no circle outside the layers listed" ]]
	# the list only shrinks: a listed layer whose objects, all given, call in no circle fails until
	# it is taken off
	obj_of graph e 'void ckpt_e(void); void ckpt_e(void) {}'
	run layers -C tree obj/lib/graph/d.o obj/lib/graph/e.o
	status_is 0
	rm tree/lib/graph/*.c && cp d.c e.c tree/lib/graph/
	bad 1 "layers: lib/README: lib/graph/ is listed among the layers still in circles, but its files call in none: take it off the list" \
		layers -C tree obj/lib/graph/d.o obj/lib/graph/e.o
	sed -i 's/^graph   planted$/kafka   planted/' tree/lib/README
	bad 1 "layers: lib/README: kafka is listed among the layers still in circles, but is not a layer of the table" layers -C tree
}
