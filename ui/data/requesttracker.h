#pragma once

#include <QMetaType>
#include <QtGlobal>

namespace relctl::ui {

// What a request to the console's worker was for. A serial alone does not
// say who asked: every requester numbers its own requests (the audit model
// numbers its pages itself, the exporter its exports), so environments
// request 5 and audit page 5 are different requests. Where answers of every
// kind meet, a failure, the worker names the request by kind and serial, and
// the session hands it to that requester alone.
//
// Typed ids rather than one serial space shared by the whole session: the
// audit model (ui/models) owns its serials and checks them itself, and with
// one shared space the session would have to hand out its serials and
// translate them back; with kinds each requester keeps its own numbering, and
// a new kind is a new enumerator that every switch over the kinds (without a
// default) is made to handle by -Wswitch.
enum class RequestKind {
    Environments,
    AuditPage,
    Timeline,
    Trace,
    Supersessions,
    Promotions,
    ManifestHistory,
    Status,
    ServerSleep
};

struct RequestId
{
    RequestKind kind = RequestKind::Environments;
    quint64 serial = 0;

    friend bool operator==(const RequestId&, const RequestId&) = default;
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::RequestId)

namespace relctl::ui {

// "Newer request wins" for one view: every request takes a serial; a result
// is applied only if it answers the newest request, so a slow answer to an
// older question never overwrites a newer one.
class RequestTracker final
{
public:
    quint64 next() { return ++m_latest; }
    bool isCurrent(quint64 serial) const { return serial == m_latest; }

private:
    quint64 m_latest = 0;
};

} // namespace relctl::ui
