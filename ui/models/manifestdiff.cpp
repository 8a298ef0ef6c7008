#include "manifestdiff.h"

#include <QCoreApplication>
#include <algorithm>
#include <map>

namespace relctl::ui {

namespace {

using nlohmann::json;

// Leaves of a manifest by dotted key. An empty object nested inside is a
// value of its own ("{}"), so adding one is seen.
void flatten(const json& value, const std::string& prefix, std::map<std::string, std::string>& out)
{
    if (value.is_object() && !value.empty()) {
        for (const auto& [key, child] : value.items())
            flatten(child, prefix.empty() ? key : prefix + "." + key, out);
        return;
    }
    if (!prefix.empty())
        out[prefix] = value.dump();
}

std::map<std::string, std::string> leaves(const json& manifest)
{
    std::map<std::string, std::string> out;
    if (manifest.is_object())
        flatten(manifest, {}, out);
    else if (!manifest.is_null())
        out[""] = manifest.dump(); // not an object: compared as one value
    return out;
}

QString tr(const char* text)
{
    return QCoreApplication::translate("relctl::ui::ManifestDiff", text);
}

} // namespace

QList<ManifestChange> diffManifests(const nlohmann::json& before, const nlohmann::json& after)
{
    const std::map<std::string, std::string> a = leaves(before);
    const std::map<std::string, std::string> b = leaves(after);
    QList<ManifestChange> out;
    auto i = a.begin();
    auto j = b.begin();
    // A merge of two sorted key lists.
    while (i != a.end() || j != b.end()) {
        ManifestChange c;
        if (j == b.end() || (i != a.end() && i->first < j->first)) {
            c = {ManifestChange::Kind::Removed,
                 QString::fromStdString(i->first),
                 QString::fromStdString(i->second),
                 {}};
            ++i;
        } else if (i == a.end() || j->first < i->first) {
            c = {ManifestChange::Kind::Added,
                 QString::fromStdString(j->first),
                 {},
                 QString::fromStdString(j->second)};
            ++j;
        } else {
            c = {i->second == j->second ? ManifestChange::Kind::Unchanged : ManifestChange::Kind::Changed,
                 QString::fromStdString(i->first), QString::fromStdString(i->second),
                 QString::fromStdString(j->second)};
            ++i;
            ++j;
        }
        out << c;
    }
    return out;
}

qsizetype changeCount(const QList<ManifestChange>& changes)
{
    return std::count_if(changes.begin(), changes.end(),
                         [](const ManifestChange& c) { return c.kind != ManifestChange::Kind::Unchanged; });
}

QString manifestDiffHtml(const QList<ManifestChange>& changes, const QString& beforeTitle,
                         const QString& afterTitle)
{
    if (changeCount(changes) == 0)
        return QStringLiteral("<p><i>%1</i></p>").arg(tr("The manifests are the same."));
    QString out = QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"3\">"
                                 "<tr><th>%1</th><th>%2</th><th>%3</th></tr>")
                      .arg(tr("Key"), beforeTitle.toHtmlEscaped(), afterTitle.toHtmlEscaped());
    for (const ManifestChange& c : changes) {
        if (c.kind == ManifestChange::Kind::Unchanged)
            continue;
        // Colour only as a second cue: the sign says what happened.
        const QString sign = c.kind == ManifestChange::Kind::Added     ? QStringLiteral("+")
                             : c.kind == ManifestChange::Kind::Removed ? QStringLiteral("−")
                                                                       : QStringLiteral("~");
        const QString colour = c.kind == ManifestChange::Kind::Added     ? QStringLiteral("#1a7f37")
                               : c.kind == ManifestChange::Kind::Removed ? QStringLiteral("#b03a2e")
                                                                         : QStringLiteral("#9a6700");
        out += QStringLiteral("<tr><td><font color=\"%1\">%2 <tt>%3</tt></font></td><td><tt>%4</tt></td>"
                              "<td><tt>%5</tt></td></tr>")
                   .arg(colour, sign, c.key.isEmpty() ? tr("(whole manifest)") : c.key.toHtmlEscaped(),
                        c.before.isEmpty() ? QStringLiteral("–") : c.before.toHtmlEscaped(),
                        c.after.isEmpty() ? QStringLiteral("–") : c.after.toHtmlEscaped());
    }
    return out + QStringLiteral("</table>");
}

} // namespace relctl::ui
