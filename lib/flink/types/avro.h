/* avro.h: the Avro schema as avro.c parses it from an AvroSerializerSnapshot (owned by the
 * serializer's ext, freed by ckpt_fser_avro_free), shared with avro-enc.c, which writes values. */
#ifndef CKPT_FLINK_AVRO_H
#define CKPT_FLINK_AVRO_H

#include <stddef.h>

#define AVRO_DEPTH 100        /* values nested deeper are refused */
#define AVRO_FIXED_MAX 65536  /* a fixed of more bytes is not read */
#define AVRO_DECIMAL_MAX 1024 /* nor a decimal of more bytes */
#define AVRO_NULLS_MAX 65536  /* nor a block of more items that take no bytes */

enum ckpt_fser_avro_type {
	A_NULL, A_BOOL, A_INT, A_LONG, A_FLOAT, A_DOUBLE, A_BYTES, A_STRING, A_RECORD, A_ENUM, A_ARRAY, A_MAP, A_UNION,
	A_FIXED
};
enum ckpt_fser_avro_logical { L_NONE, L_DECIMAL, L_DATE, L_TIME_MS, L_TIME_US, L_TS_MS, L_TS_US, L_LTS_MS, L_LTS_US };

struct ckpt_fser_avro_node {
	enum ckpt_fser_avro_type type;
	enum ckpt_fser_avro_logical logical;
	int scale;              /* decimal */
	size_t size;            /* fixed */
	char *name;             /* the full name of a record, enum or fixed */
	struct ckpt_fser_avro_node **kids;    /* record fields, union branches; array items and map values: kids[0] */
	char **names;           /* record field names, enum symbols */
	size_t nkids, nnames, kidcap, namecap;
};

struct ckpt_fser_avro_schema {
	struct ckpt_fser_avro_node **all;     /* every node, each once (named ones are referred to from many places) */
	size_t nall, cap;
	struct ckpt_fser_avro_node *root;
	char why[160];          /* what a schema ckpt does not take has */
};

#endif
