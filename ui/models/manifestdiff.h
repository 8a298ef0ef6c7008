#pragma once

// What changes between two manifests, key by key: what a release manager
// reads before approving a promotion or confirming a rollback. Nested objects
// are walked (their keys joined with "."); arrays and scalars are compared as
// whole values, shown as compact JSON. A null manifest (nothing published, or
// not known) reads as an empty one, so every key of the other is added or removed.

#include <QList>
#include <QString>
#include <nlohmann/json.hpp>

namespace relctl::ui {

struct ManifestChange
{
    enum class Kind { Added, Removed, Changed, Unchanged };
    Kind kind = Kind::Unchanged;
    QString key;    // "image", "resources.cpu"
    QString before; // compact JSON; empty when added
    QString after;  // compact JSON; empty when removed
};

// Every key of either manifest, in key order; Unchanged entries included, so
// a caller can show the whole manifest or only what differs.
QList<ManifestChange> diffManifests(const nlohmann::json& before, const nlohmann::json& after);

// How many entries are not Unchanged.
qsizetype changeCount(const QList<ManifestChange>& changes);

// The changes (not the unchanged keys) as an HTML table with the two
// columns headed `beforeTitle` and `afterTitle`; "no change" when none.
QString manifestDiffHtml(const QList<ManifestChange>& changes, const QString& beforeTitle,
                         const QString& afterTitle);

} // namespace relctl::ui
