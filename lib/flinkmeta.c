/* flinkmeta.c: STUB until the Flink metadata concern lands; see ckpt.h. */
#include <string.h>

#include "ckpt.h"

int
ckpt_flinkmeta_sniff(const void *buf, size_t len)
{
	(void)buf, (void)len;
	return 0;
}

struct ckpt_snapshot *
ckpt_flinkmeta_decode(const void *buf, size_t len, const char *name, struct ckpt_err *e)
{
	(void)buf, (void)len;
	ckpt_err_set(e, CKPT_ERR_INPUT, name, "Flink metadata is not implemented yet");
	return NULL;
}

void
ckpt_flink_operator_id(const char *uid, size_t len, char out[33])
{
	(void)uid, (void)len;
	memset(out, '0', 32);
	out[32] = '\0';
}
