/* fuzz_pipeline.c: the pipeline file loader (ckpt-pipeline(5)) on any bytes; nothing is run. */
#include "ckpt.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ckpt_err e = {0};

	ckpt_pipeline_free(ckpt_pipeline_load(fuzz_memfile(data, size), &e));
	return 0;
}
