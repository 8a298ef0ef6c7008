#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace relctl {

// A dedicated connection that follows the protocol's events. Decisions of
// operators and release managers, and every event on an environment someone
// waits for, are announced on channel "relctl" (take() reads them); the rest
// (renewals, refusals, unwatched handovers) are not announced, so that they
// do not serialise their commits (functions/audit.sql), and follow() reads
// them from the trail by event id. Kept apart from the query connection
// because notifications are not delivered while a transaction is open on the
// connection. Owned by one thread.
class EventListener final
{
public:
    // Connects and LISTENs. Throws Error(Unavailable) when the server cannot
    // be reached. `settle`: how long an id missing below visible ones is
    // given before the transactions that may hold it are checked (follow()).
    explicit EventListener(const std::string& conninfo,
                           std::chrono::milliseconds settle = std::chrono::milliseconds(1000));
    ~EventListener();
    EventListener(const EventListener&) = delete;
    EventListener& operator=(const EventListener&) = delete;

    // The connection's socket: readable when notifications may be waiting.
    // After a reconnect (a new EventListener) it is another socket.
    int socket() const;

    // Consumes what arrived without blocking and returns the environments the
    // events were about (deduplicated, in arrival order). Throws
    // Error(Unavailable) when the connection is gone: nothing is kept for a
    // disconnected listener, so the caller re-reads everything after
    // reconnecting.
    std::vector<std::string> take();

    // Reads the trail by event id (relctl.events_after) and returns the
    // environments of the events committed since the last call, as take()
    // does: each committed event is reported once, also one whose id was
    // taken before a visible event's but which committed after it. An empty
    // name means "anything may have changed" (too many new events to list
    // in one call, or a run of missing ids too long to follow); the events
    // read are still reported, and the next call goes on from there. The
    // first call only notes where the trail ends, and which of the 10,000
    // ids below its end may still commit (an event whose id is older still
    // and that commits later is not reported). Each call reads at most
    // 10,000 events and 10,000 missing ids, by id: its cost does not grow
    // with the trail or the number of environments. Call it on a timer.
    // Throws like take().
    std::vector<std::string> follow();

    // The ids below the newest one read that may still commit: what follow()
    // asks about again. An id whose transaction rolled back is dropped once
    // every transaction in progress when it was noticed (after `settle`) has
    // ended.
    std::size_t pendingIds() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace relctl
