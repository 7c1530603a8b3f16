/* rowdata.h: the logical types of Flink SQL's internal data, as rowdata.c reads them from
 * RowDataSerializer's snapshots; shared with rowkey.c, which writes key rows of them (-k). */
#ifndef CKPT_FLINK_ROWDATA_H
#define CKPT_FLINK_ROWDATA_H

#include <stddef.h>

enum ckpt_frow_root {
	RD_UNKNOWN, RD_CHAR, RD_VARCHAR, RD_BOOLEAN, RD_BINARY, RD_VARBINARY, RD_DECIMAL, RD_TINYINT,
	RD_SMALLINT, RD_INTEGER, RD_BIGINT, RD_FLOAT, RD_DOUBLE, RD_DATE, RD_TIME, RD_TIMESTAMP, RD_TIMESTAMP_LTZ,
	RD_INTERVAL_YM, RD_INTERVAL_DT, RD_ARRAY, RD_MULTISET, RD_MAP, RD_ROW, RD_RAW,
	RD_STRUCT, /* a structured type: a nested row of its attributes */
};

/* A logical type: ROW has its fields as kids (names), ARRAY and MULTISET the element, MAP key and value. */
struct ckpt_frow_type {
	enum ckpt_frow_root root;
	char *name;   /* RD_UNKNOWN: why it is not decoded; RD_RAW: the class */
	int precision, scale;
	size_t n;
	struct ckpt_frow_type **kids;
	char **names;
	size_t kidcap, namecap; /* the room of kids and names (ckpt_grow) */
};

/* LogicalTypeRoot's name of t, with its precision (and scale) where it has one, into buf. */
const char *ckpt_frow_root_name(const struct ckpt_frow_type *t, char *buf, size_t n);
/* RowKind's short strings, by its byte value. */
extern const char *const ckpt_frow_row_kinds[4];

#endif
