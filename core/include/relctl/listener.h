#pragma once

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
    // Connects and LISTENs. Throws Error(Unavailable) when the server cannot be reached.
    explicit EventListener(const std::string& conninfo);
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

    // Reads the trail past the last event seen (relctl.events_after) and
    // returns the environments of the new events, as take() does; an empty
    // name means "anything may have changed" (too many new events to list).
    // The first call only notes where the trail ends. Call it on a timer.
    // Throws like take().
    std::vector<std::string> follow();

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace relctl
