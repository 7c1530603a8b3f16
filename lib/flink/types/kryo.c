/* kryo.c: values of Flink's KryoSerializer.  Kryo writes no schema, so a value is only named
 * (the class Kryo wrote before it) and kept as its bytes; and it has no length, so it is read only
 * where its end is known: the rest of an entry, less the bytes that follow it (s->tail). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

/* The classes every Kryo registers first, in its constructor (2.24 and 5.x alike), by id: a
 * primitive's registration is its wrapper's too (DefaultClassResolver.register), and a value in state
 * is an object. */
static const char *const kryo_default[] = {
	"java.lang.Integer", "java.lang.String", "java.lang.Float", "java.lang.Boolean", "java.lang.Byte",
	"java.lang.Character", "java.lang.Short", "java.lang.Long", "java.lang.Double", "void",
};

/* Kryo's varint (writeVarInt, optimizePositive): 7 bits a byte, low first, at most 5 bytes. */
static int
kryo_varint(const unsigned char *p, size_t n, size_t *at, uint32_t *v)
{
	uint32_t x = 0;

	for (int shift = 0; shift < 35; shift += 7) {
		if (*at >= n)
			return -1;
		x |= (uint32_t)(p[*at] & 0x7f) << shift;
		if (p[(*at)++] < 0x80) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Kryo's writeString of a class name: ASCII with the last byte's high bit set, or (64 characters
 * and more) its UTF-8 length form: a length + 1 whose first byte has the bit 0x80 (6 bits, 0x40
 * for more), then the characters.  Only ASCII names are taken; NULL for any other. */
static char *
kryo_name(const unsigned char *p, size_t n, size_t *at)
{
	size_t start = *at, len = 0;
	char *name;

	if (*at >= n)
		return NULL;
	if (p[*at] & 0x80) {
		uint32_t x = p[*at] & 0x3f, more = p[*at] & 0x40, rest;

		(*at)++;
		if (more) {
			if (kryo_varint(p, n, at, &rest) < 0 || rest > (UINT32_MAX >> 6))
				return NULL;
			x |= rest << 6;
		}
		if (x < 2 || x - 1 > n - *at)
			return NULL;
		len = x - 1;
		start = *at;
		for (size_t i = 0; i < len; i++)
			if (p[start + i] >= 0x80 || p[start + i] == 0)
				return NULL;
		*at += len;
	} else {
		while (*at < n && !(p[*at] & 0x80))
			(*at)++;
		if (*at >= n)
			return NULL;
		len = ++(*at) - start;
	}
	if ((name = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(name, p + start, len);
	name[len - 1] &= 0x7f;
	name[len] = '\0';
	return name;
}

/* The class Kryo wrote first (writeClass): the id + 2 of a registered class, 0 for null, or 1, a
 * name id and the class name.  Emits "kryo_class" and "kryo_id" into o. */
static int
kryo_class(struct ckpt_fsrc *s, struct ckpt_fout *o, const unsigned char *p, size_t n)
{
	size_t at = 0;
	uint32_t v, id;
	char *name = NULL;
	int r;

	if (kryo_varint(p, n, &at, &v) < 0)
		return ckpt_fsrc_fail(s, "Kryo value of %zu bytes without a class", n);
	ckpt_fout_key_lit(o, "kryo_class");
	if (v == 0) {
		r = ckpt_fout_null(o);
	} else if (v == 1) {
		if (kryo_varint(p, n, &at, &id) < 0)
			return ckpt_fsrc_fail(s, "Kryo class name without its id");
		name = kryo_name(p, n, &at);
		r = name ? ckpt_fout_str(o, name, strlen(name)) : ckpt_fout_null(o);
	} else if (v - 2 < sizeof kryo_default / sizeof *kryo_default) {
		r = ckpt_fout_str(o, kryo_default[v - 2], strlen(kryo_default[v - 2]));
	} else {
		r = ckpt_fout_null(o); /* registered by the job: its id alone says nothing more */
	}
	free(name);
	ckpt_fout_key_lit(o, "kryo_id");
	if (r == 0)
		r = v >= 2 ? ckpt_fout_int(o, v - 2) : ckpt_fout_null(o);
	return r < 0 ? ckpt_fsrc_nomem(s) : 0;
}

/* Kryo's varlong (writeVarLong): 7 bits a byte, low first, the ninth byte whole. */
static int
kryo_varlong(const unsigned char *p, size_t n, size_t *at, uint64_t *v)
{
	uint64_t x = 0;

	for (int i = 0; i < 9; i++) {
		if (*at >= n)
			return -1;
		if (i == 8) {
			*v = x | (uint64_t)p[(*at)++] << 56;
			return 0;
		}
		x |= (uint64_t)(p[*at] & 0x7f) << (7 * i);
		if (p[(*at)++] < 0x80) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* String.hashCode of what Kryo's writeString wrote at p[at, n), to its end: ASCII with the last
 * byte's high bit set, or a length + 1 (0x80 set in its first byte) and the characters as Kryo
 * writes them (1, 2 or 3 bytes a UTF-16 unit).  0: not a whole string. */
static int
kryo_string_hash(const unsigned char *p, size_t n, size_t at, int32_t *hash)
{
	uint32_t h = 0, len, rest;

	if (at >= n)
		return 0;
	if (!(p[at] & 0x80)) { /* ASCII: the bytes to the one with its high bit */
		for (; at < n; at++) {
			h = 31 * h + (p[at] & 0x7fu);
			if (p[at] & 0x80)
				break;
		}
		*hash = (int32_t)h;
		return at + 1 == n;
	}
	len = p[at] & 0x3f;
	if (p[at++] & 0x40) {
		if (kryo_varint(p, n, &at, &rest) < 0 || rest > (UINT32_MAX >> 6))
			return 0;
		len |= rest << 6;
	}
	if (len == 0) /* null: no hashCode (Flink refuses a null key) */
		return 0;
	for (uint32_t i = 0; i + 1 < len; i++) {
		uint32_t c;

		if (at >= n)
			return 0;
		c = p[at];
		if (c >> 4 == 12 || c >> 4 == 13) {
			if (at + 1 >= n)
				return 0;
			c = (c & 0x1f) << 6 | (p[at + 1] & 0x3f);
			at += 2;
		} else if (c >> 4 == 14) {
			if (at + 2 >= n)
				return 0;
			c = (c & 0x0f) << 12 | (p[at + 1] & 0x3fu) << 6 | (p[at + 2] & 0x3f);
			at += 3;
		} else {
			at++;
		}
		h = 31 * h + c;
	}
	*hash = (int32_t)h;
	return at == n;
}

/* The hashCode of a value of Kryo's default classes (by id: Integer, String, Float, Boolean, Byte,
 * Character, Short, Long, Double, as Kryo's DefaultSerializers write them) filling p[at, n) to its
 * end; 0 for any other (a class Kryo writes no schema of: no hash is claimed). */
static int
kryo_hash(uint32_t id, const unsigned char *p, size_t n, size_t at, int32_t *hash)
{
	static const unsigned char fixed[] = {0, 0, 4, 1, 1, 2, 2, 0, 8}; /* bytes of a fixed-size one */
	uint64_t x;
	uint32_t v;

	if (id >= sizeof fixed)
		return 0;
	if (id == 1)
		return kryo_string_hash(p, n, at, hash);
	if (id == 0 || id == 7) { /* writeInt and writeLong (value, false): zig-zag varints */
		if (id == 0 ? kryo_varint(p, n, &at, &v) < 0 : kryo_varlong(p, n, &at, &x) < 0)
			return 0;
		x = id == 0 ? (uint64_t)(int64_t)(int32_t)((v >> 1) ^ -(v & 1)) : (x >> 1) ^ -(x & 1);
		*hash = id == 0 ? (int32_t)x : (int32_t)(uint32_t)(x ^ x >> 32);
		return at == n;
	}
	if (n - at != fixed[id])
		return 0;
	x = ckpt_load_be(p + at, fixed[id]);
	switch (id) {
	case 2: /* Float.hashCode: floatToIntBits, one NaN */
		*hash = (int32_t)((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffff) ? 0x7fc00000u : x);
		return 1;
	case 3:
		*hash = x ? 1231 : 1237;
		return 1;
	case 4: case 6: /* Byte, Short: the signed value */
		*hash = id == 4 ? (int8_t)x : (int16_t)x;
		return 1;
	case 5:
		*hash = (int32_t)x;
		return 1;
	default: /* Double.hashCode: doubleToLongBits, one NaN */
		if ((x & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (x & 0xfffffffffffffull))
			x = 0x7ff8000000000000ull;
		*hash = (int32_t)(uint32_t)(x ^ x >> 32);
		return 1;
	}
}

int
ckpt_fser_kryo_value(const struct ckpt_fser *t, struct ckpt_fsrc *s, struct ckpt_fout *o, int32_t *hash,
		     int *hashed)
{
	size_t at = 0;
	uint32_t v;

	unsigned char *p;
	size_t n;
	int r;

	if (s->fd >= 0 || s->obj || s->snappy || s->capture || s->wlen - s->wpos < s->tail)
		return ckpt_fsrc_fail(s, "a Kryo value (%s) whose end is not known", t->name ? t->name : "?");
	n = s->wlen - s->wpos - s->tail;
	if ((p = malloc(n ? n : 1)) == NULL)
		return ckpt_fsrc_nomem(s);
	memcpy(p, s->win + s->wpos, n);
	if (hash && kryo_varint(p, n, &at, &v) == 0 && v >= 2)
		*hashed = kryo_hash(v - 2, p, n, at, hash);
	if (ckpt_fout_open(o, '{') < 0) {
		free(p);
		return ckpt_fsrc_nomem(s);
	}
	r = kryo_class(s, o, p, n);
	if (r == 0) {
		static const char why[] = "Kryo writes no schema: the bytes are kept as they are";

		ckpt_fout_key_lit(o, "typed");
		r = ckpt_fout_null(o);
		ckpt_fout_key_lit(o, "reason");
		r |= ckpt_fout_str(o, why, sizeof why - 1);
		ckpt_fout_key_lit(o, "bytes");
		r |= ckpt_fout_entry(o, p, n);
		r = r < 0 ? ckpt_fsrc_nomem(s) : 0;
	}
	free(p);
	if (r < 0)
		return -1;
	ckpt_fout_close(o);
	s->wpos += n;
	return 0;
}
