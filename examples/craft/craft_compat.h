/*
 * craft_compat: the few names in which the raft releases this example builds
 * against differ. Debian's libraft-dev 0.15.0 is the reference; a library
 * built from a source tree (CRAFT_FROM_SOURCE: cowsql/raft or canonical/raft
 * at any commit since 2022) gets, from CMakeLists.txt, what its raft.h has:
 *
 *   CRAFT_HAS_IO_NAMES      message types are RAFT_IO_* (before 2024-02)
 *   CRAFT_HAS_LEGACY_LOG    raft's log cache is r->legacy.log (2024-01 on)
 *   CRAFT_HAS_EMBEDDED_LOG  raft's log is the struct r->log (until 2022)
 *   CRAFT_HAS_TRIBOOL       RequestVoteResult.pre_vote is a raft_tribool
 *   CRAFT_HAS_MSG_VERSION   messages have a version field (2022-08 on)
 *   CRAFT_HAS_CAPACITY      results carry features and disk capacity
 *
 * The in-memory log is read through raft's own log.h when built from
 * source; Debian's 0.15.0 declares struct raft_log in raft.h.
 */
#ifndef CRAFT_COMPAT_H
#define CRAFT_COMPAT_H

#include <raft.h>

#if !defined(CRAFT_FROM_SOURCE)
#define CRAFT_HAS_IO_NAMES 1
#define CRAFT_HAS_TRIBOOL 1
#endif

#if !defined(CRAFT_HAS_IO_NAMES)
#define RAFT_IO_APPEND_ENTRIES RAFT_APPEND_ENTRIES
#define RAFT_IO_APPEND_ENTRIES_RESULT RAFT_APPEND_ENTRIES_RESULT
#define RAFT_IO_REQUEST_VOTE RAFT_REQUEST_VOTE
#define RAFT_IO_REQUEST_VOTE_RESULT RAFT_REQUEST_VOTE_RESULT
#define RAFT_IO_INSTALL_SNAPSHOT RAFT_INSTALL_SNAPSHOT
#define RAFT_IO_TIMEOUT_NOW RAFT_TIMEOUT_NOW
#endif

/* Messages carry a version byte (2022-08 on) and the results the sender's
 * features and reserved disk capacity (2023 on); craft_io's wire format has
 * these bytes only where the release has the fields, so that Debian's
 * 0.15.0 build keeps its format (and its regression scenarios their runs). */
#define CRAFT_WIRE_EXTRA (CRAFT_WIRE_VERSION + CRAFT_WIRE_CAPACITY)
#if defined(CRAFT_HAS_MSG_VERSION)
#define CRAFT_WIRE_VERSION 1
#else
#define CRAFT_WIRE_VERSION 0
#endif
#if defined(CRAFT_HAS_CAPACITY)
#define CRAFT_WIRE_CAPACITY 4
#else
#define CRAFT_WIRE_CAPACITY 0
#endif

#if defined(CRAFT_HAS_MSG_VERSION)
/** The version field of a message, whichever its type. */
static inline unsigned char craft_msg_version(const struct raft_message *m) {
  switch (m->type) {
  case RAFT_IO_REQUEST_VOTE: return m->request_vote.version;
  case RAFT_IO_REQUEST_VOTE_RESULT: return m->request_vote_result.version;
  case RAFT_IO_APPEND_ENTRIES: return m->append_entries.version;
  case RAFT_IO_APPEND_ENTRIES_RESULT: return m->append_entries_result.version;
  case RAFT_IO_INSTALL_SNAPSHOT: return m->install_snapshot.version;
  case RAFT_IO_TIMEOUT_NOW: return m->timeout_now.version;
  default: return 0;
  }
}

/** Set the version field of a decoded message. */
static inline void craft_set_msg_version(struct raft_message *m, unsigned char v) {
  switch (m->type) {
  case RAFT_IO_REQUEST_VOTE: m->request_vote.version = v; break;
  case RAFT_IO_REQUEST_VOTE_RESULT: m->request_vote_result.version = v; break;
  case RAFT_IO_APPEND_ENTRIES: m->append_entries.version = v; break;
  case RAFT_IO_APPEND_ENTRIES_RESULT: m->append_entries_result.version = v; break;
  case RAFT_IO_INSTALL_SNAPSHOT: m->install_snapshot.version = v; break;
  case RAFT_IO_TIMEOUT_NOW: m->timeout_now.version = v; break;
  default: break;
  }
}
#endif

#if defined(CRAFT_FROM_SOURCE)
#include CRAFT_RAFT_LOG_H /* raft's src/log.h: logNumEntries(), logLastIndex(), logGet() */
#if defined(CRAFT_HAS_LEGACY_LOG)
#define CRAFT_LOG(r) ((r)->legacy.log)
#elif defined(CRAFT_HAS_EMBEDDED_LOG)
#define CRAFT_LOG(r) (&(r)->log)
#else
#define CRAFT_LOG(r) ((r)->log)
#endif
#endif

/** Number of entries in raft's in-memory log. */
static inline size_t craft_log_count(struct raft *r) {
#if defined(CRAFT_FROM_SOURCE)
  return logNumEntries(CRAFT_LOG(r));
#else
  const struct raft_log *l = &r->log;
  return l->back >= l->front ? l->back - l->front : l->size - l->front + l->back;
#endif
}

/** Index of the entry before the first one in raft's in-memory log (the
 *  last index a snapshot covers, 0 without one). */
static inline raft_index craft_log_offset(struct raft *r) {
#if defined(CRAFT_FROM_SOURCE)
  return logLastIndex(CRAFT_LOG(r)) - craft_log_count(r);
#else
  return r->log.offset;
#endif
}

/** The entry of raft's in-memory log at `index`, or NULL. */
static inline const struct raft_entry *craft_log_at(struct raft *r, raft_index index) {
  raft_index offset = craft_log_offset(r);
  if (index <= offset || index - offset > craft_log_count(r))
    return NULL;
#if defined(CRAFT_FROM_SOURCE)
  return logGet(CRAFT_LOG(r), index);
#else
  const struct raft_log *l = &r->log;
  return &l->entries[(l->front + (index - l->offset - 1)) % l->size];
#endif
}

#endif
