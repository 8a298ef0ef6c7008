#pragma once

// The Promotions view's whole as the console holds it: one immutable
// snapshot that the session and every view read, handed around without a
// copy, and the handle a read crosses threads in. At 10,000 environments a
// copy of the whole costs the GUI thread ~55 ms, and it was copied three
// times a load (the session, the decisions, the view).

#include "consoletypes.h"

#include <QMetaType>
#include <QSet>
#include <QString>
#include <memory>
#include <string>
#include <vector>

namespace relctl::ui {

// A promotions read handed from the worker's thread to the session without
// a copy (as EnvironmentRows does for the environments): copies of the
// handle share the read, and its one taker, the session, moves it out.
class PromotionsReadHandle
{
public:
    PromotionsReadHandle() : PromotionsReadHandle(PromotionsSnapshot{}) {}
    // Implicit: a read is what is handed on.
    PromotionsReadHandle(PromotionsSnapshot read)
        : m_read(std::make_shared<PromotionsSnapshot>(std::move(read)))
    {
    }

    const PromotionsSnapshot& read() const { return *m_read; }
    // The read, moved out (every handle is left empty).
    PromotionsSnapshot take() const { return std::move(*m_read); }

private:
    std::shared_ptr<PromotionsSnapshot> m_read;
};

// The whole (covers empty), shared: copies share it, nothing changes it.
// It is kept as one shared piece per environment and per request, so that
// a live update's whole (a few environments replaced) shares every other
// piece with the whole before it: the update costs the environments it
// read, not the organisation.
class SharedPromotions
{
public:
    using EnvironmentPtr = std::shared_ptr<const relctl::Environment>;
    using PromotionPtr = std::shared_ptr<const relctl::Promotion>;

    SharedPromotions();
    // Implicit: a whole read becomes the snapshot (its values moved in).
    SharedPromotions(PromotionsSnapshot whole);

    // In name order.
    const std::vector<EnvironmentPtr>& environments() const { return m_data->environments; }
    // In id order.
    const std::vector<PromotionPtr>& promotions() const { return m_data->promotions; }
    // The environment named, or null (a binary search).
    const relctl::Environment* environment(const std::string& name) const;

    // This whole with the environments `names` (and their requests) taken
    // from `part` instead: those part lacks are removed. As bounded as a
    // full read: every open request, the newest kDecidedPromotions decided.
    SharedPromotions merged(const SharedPromotions& part, const QSet<QString>& names) const;

    // Both read the same pieces (a copy of one another).
    bool sharesWith(const SharedPromotions& other) const { return m_data == other.m_data; }

private:
    struct Data
    {
        std::vector<EnvironmentPtr> environments;
        std::vector<PromotionPtr> promotions;
    };
    explicit SharedPromotions(std::shared_ptr<const Data> data) : m_data(std::move(data)) {}

    std::shared_ptr<const Data> m_data;
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::PromotionsReadHandle)
Q_DECLARE_METATYPE(relctl::ui::SharedPromotions)
