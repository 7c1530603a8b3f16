/* javaser.h: a reader and writer of Java's serialization stream (java.io.ObjectOutputStream), which Flink
 * uses for CheckpointProperties and its job events; library-internal, programs never include it. */
#ifndef CKPT_FLINK_JAVASER_H
#define CKPT_FLINK_JAVASER_H

#include "base/base.h"

/* The stream's type codes (java.io.ObjectStreamConstants), for the reader and the writer alike. */
#define TC_NULL 0x70
#define TC_REFERENCE 0x71
#define TC_CLASSDESC 0x72
#define TC_OBJECT 0x73
#define TC_STRING 0x74
#define TC_ARRAY 0x75
#define TC_CLASS 0x76
#define TC_BLOCKDATA 0x77
#define TC_ENDBLOCKDATA 0x78
#define TC_BLOCKDATALONG 0x7a
#define TC_LONGSTRING 0x7c
#define TC_ENUM 0x7e
#define BASE_HANDLE 0x7e0000 /* baseWireHandle: the first handle a stream assigns */

#define CKPT_JAVASER_MAGIC 0xaced0005U /* STREAM_MAGIC, STREAM_VERSION */

/* Class descriptor flags (java.io.ObjectStreamConstants). */
#define CKPT_JAVASER_SC_WRITE_METHOD 0x01
#define CKPT_JAVASER_SC_SERIALIZABLE 0x02
#define CKPT_JAVASER_SC_EXTERNALIZABLE 0x04
#define CKPT_JAVASER_SC_BLOCK_DATA 0x08
#define CKPT_JAVASER_SC_ENUM 0x10

/* Reader flags. */
/* Refuse, where they appear, what plain serializable classes and enums never produce: arrays,
 * Class objects, long strings, block data, class annotations and classes with writeObject or
 * writeExternal (flags other than SC_SERIALIZABLE, SC_SERIALIZABLE|SC_ENUM). */
#define CKPT_JAVASER_PLAIN 0x1

enum ckpt_javaser_kind {
	CKPT_JAVASER_NULL,   /* TC_NULL */
	CKPT_JAVASER_PRIM,   /* a primitive field or array element; type says which */
	CKPT_JAVASER_STRING, /* TC_STRING, TC_LONGSTRING */
	CKPT_JAVASER_OBJECT, /* TC_OBJECT */
	CKPT_JAVASER_ENUM,   /* TC_ENUM: cls and the constant's name in str */
	CKPT_JAVASER_ARRAY,  /* TC_ARRAY */
	CKPT_JAVASER_CLASS,  /* TC_CLASS: a java.lang.Class object, cls says which */
	CKPT_JAVASER_BLOCK,  /* TC_BLOCKDATA, TC_BLOCKDATALONG: raw bytes of writeInt and friends */
};

struct ckpt_javaser_field {
	char type;       /* B C D F I J S Z, L (object) or [ (array) */
	char *name;
	size_t len;      /* strlen(name) */
	const char *sig; /* L and [: the field's type as a JVM signature ("Ljava/lang/String;"), else NULL */
};

struct ckpt_javaser_class {
	char *name;      /* "org.apache.flink...CheckpointType", "[I", ... */
	int64_t suid;    /* serialVersionUID */
	uint8_t flags;   /* CKPT_JAVASER_SC_* */
	size_t nfields;
	struct ckpt_javaser_field *fields;
	size_t nannotations; /* classAnnotation: what annotateClass wrote (usually nothing) */
	struct ckpt_javaser_value **annotations;
	const struct ckpt_javaser_class *super; /* NULL at the top of the serializable hierarchy */
	size_t at;       /* offset of its TC_CLASSDESC */
};

/* What one class of an object's hierarchy wrote. */
struct ckpt_javaser_classdata {
	const struct ckpt_javaser_class *cls;
	struct ckpt_javaser_value **fields; /* cls->nfields values (none for externalizable classes) */
	size_t nextra;                      /* writeObject / writeExternal data after the fields, up to */
	struct ckpt_javaser_value **extra;  /* TC_ENDBLOCKDATA: block data and objects, in order */
};

/*
 * A value.  Values form a directed acyclic graph: a back-reference (TC_REFERENCE) yields the
 * value it names, so one value can be reached twice; a reference to an object still being read
 * is refused.  Every value, class and string belongs to the reader.
 */
struct ckpt_javaser_value {
	enum ckpt_javaser_kind kind;
	size_t at;     /* offset of its first byte (its TC_ token; a primitive's first byte) */
	size_t handle; /* its index in the handle table, or SIZE_MAX (null, primitives, block data) */
	char type;     /* PRIM: B C D F I J S Z */
	int64_t i;     /* PRIM B C I J S Z (C as an unsigned UTF-16 unit, Z as 0 or 1) */
	double d;      /* PRIM D F */
	const char *str; /* STRING: UTF-8, NUL-terminated; ENUM: the constant's name */
	size_t len;      /* STRING, ENUM: strlen(str); BLOCK: bytes */
	const unsigned char *bytes; /* BLOCK: into the reader's buffer */
	const struct ckpt_javaser_class *cls; /* OBJECT, ENUM, ARRAY, CLASS */
	size_t n;                        /* OBJECT: entries of data; ARRAY: elements */
	struct ckpt_javaser_classdata *data; /* OBJECT: the top-most serializable class first */
	struct ckpt_javaser_value **items;   /* ARRAY */
};

/*
 * A reader over len bytes of buf (which must outlive it); name is the "where" of its errors,
 * which read "offset N: what was expected or found".  Nesting (objects within objects, class
 * descriptors within class descriptors) deeper than depth is refused.  NULL on allocation failure.
 */
struct ckpt_javaser *ckpt_javaser_new(const void *buf, size_t len, const char *name, unsigned flags,
				      int depth, struct ckpt_err *e);
/*
 * Make the reader read the len bytes of buf instead, a new stream (handles start again), with
 * errors into e.  Values of the stream before are freed; its class descriptors are remembered, so
 * that the same descriptor bytes at the same place of a later stream are not read again (memory
 * for them is bounded).
 */
void ckpt_javaser_reset(struct ckpt_javaser *j, const void *buf, size_t len, struct ckpt_err *e);
/* Free the reader and every value, class and string it returned.  Accepts NULL. */
void ckpt_javaser_free(struct ckpt_javaser *j);
/* Check the stream header (magic, version 5) at *pos and step over it; -1 with e set if absent. */
int ckpt_javaser_header(struct ckpt_javaser *j, size_t *pos);
/* Read one content item (an object or block data) at *pos and step over it; *out belongs to j. */
int ckpt_javaser_read(struct ckpt_javaser *j, size_t *pos, const struct ckpt_javaser_value **out);
/* Handles assigned so far: each value's handle is below this. */
size_t ckpt_javaser_handles(const struct ckpt_javaser *j);
/* The value of an object's field by its name, the most derived class first; NULL if none. */
const struct ckpt_javaser_value *ckpt_javaser_field(const struct ckpt_javaser_value *obj, const char *name);
/*
 * Java's modified UTF-8 (DataOutput.writeUTF) of n bytes to a new NUL-terminated UTF-8 string
 * (surrogate pairs joined) for the caller to free: 0, or CKPT_JAVASER_EUTF if malformed (a 0 byte
 * too), CKPT_JAVASER_ENUL if it holds U+0000 (c0 80), CKPT_JAVASER_ENOMEM; *bad: the index of the
 * byte at fault.  ckpt_javaser_mutf8_why: the message for such a failure, the string called what.
 */
enum { CKPT_JAVASER_EUTF = -1, CKPT_JAVASER_ENUL = -2, CKPT_JAVASER_ENOMEM = -3 };
int ckpt_javaser_mutf8(const unsigned char *s, size_t n, char **out, size_t *bad);
void ckpt_javaser_mutf8_why(int rc, const unsigned char *s, size_t n, size_t bad, const char *what, char *buf,
			    size_t size);
/* Java's DataOutput.writeUTF at the cursor: a u16 length, then modified UTF-8, into *out (malloc'd,
 * NUL-terminated UTF-8, NULL on failure); faults fail at their byte ("damaged WHAT: ..."). */
int ckpt_javaser_utf(struct ckpt_cur *c, char **out, const char *what);

/*
 * javaser-write.c: v (a value of a reader, or built alike) written as ObjectOutputStream writes it,
 * the stream header first, appended to out: a value or string reached again (the same pointer; a
 * string by its text's) and a class of a name written before a back-reference.  Nesting deeper
 * than depth is refused.  0, or -1 with e set.
 */
int ckpt_javaser_write(const struct ckpt_javaser_value *v, int depth, struct ckpt_bytebuf *out, struct ckpt_err *e);

#endif
