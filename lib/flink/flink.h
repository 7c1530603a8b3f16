/* flink.h: the Flink layer (lib/flink/): Flink's formats read strictly and written as Flink does
 * (_metadata, Java serialization, serializer snapshots, state files, Snappy framing; the layouts
 * are in ckpt-flink(5)), offered to the snapshot, redistribution and event-log layers.  It is three
 * floors, each a folder with one header saying what it owns (lib/README, `make layers` checks them):
 *   state/   state files read, checked, printed, regrouped; the backing of a Flink snapshot
 *   types/   serializer snapshots and the values they write
 *   format/  byte sources, the value output, Java serialization, _metadata read and written
 * The layers above include this header, which is the three floors' headers. */
#ifndef CKPT_FLINK_H
#define CKPT_FLINK_H

#include "flink/state/state.h"

#endif
