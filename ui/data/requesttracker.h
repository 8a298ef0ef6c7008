#pragma once

#include <QtGlobal>

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
