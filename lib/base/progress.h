/* progress.h: how library code reports progress (progress.c); each call is cheap when no hook is set. */
#ifndef CKPT_PROGRESS_INT_H
#define CKPT_PROGRESS_INT_H

#include "base.h"

/* Is a hook set?  (To skip work done only for the report, such as summing sizes.) */
int ckpt_progress_on(void);
/* Start reporting the work key (any address naming it): unit, total (0 when unknown).
 * Ignored while other work is being reported. */
void ckpt_progress_begin(const void *key, const char *unit, uint64_t total);
/* done of key's total; ignored unless key is the work being reported. */
void ckpt_progress_at(const void *key, uint64_t done);
/* n more done of the work being reported, whatever it is (the bytes of state files read on
 * several threads at once: one thread reports, the others count on). */
void ckpt_progress_add(uint64_t n);
/* key is over; the hook's end is called. */
void ckpt_progress_end(const void *key);

#endif
