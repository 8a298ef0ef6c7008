#pragma once

// How the console reads what became of a job or an op id (relctl::JobStatus:
// relctl.job_state, relctl.op_state) and what a stopped command left behind
// (the `stopped` object of a release event's detail): the formatting half of
// the status card, pure functions of the server's values. Keys are the
// server's own ("expires_in_ms", "superseded_by.job"): one name from SQL to
// the card; only the values are made readable.

#include <QColor>
#include <QList>
#include <QString>
#include <nlohmann/json.hpp>

namespace relctl::ui::jobstatus {

// The colour of a state's badge: completed green, accepted-running and
// queued blue, rejected red, ended-unpublished and cancelled amber; unknown,
// and any state this console does not know yet, grey.
QColor stateColour(const QString& state);

// One line of a status's evidence: the key (nested ones under their
// parent, `depth` deep) and its value as a person reads it.
struct EvidenceRow
{
    QString key;
    QString value;
    int depth = 0;
};

// The evidence, key by key in the server's (alphabetical) order: times as
// the console shows them, *_ms spans as durations, booleans as yes/no,
// objects as their keys below them, nulls left out (the card shows what is
// there). A `stopped` object reads as stoppedWords() above its keys; the
// caveat is left out (the card shows it on its own, see caveat()).
QList<EvidenceRow> evidenceRows(const nlohmann::json& evidence);

// The evidence's caveat (a stopped command's external work), or empty.
QString caveat(const nlohmann::json& evidence);

// What the command wrapper stopped, in words, from what there is of it:
// "stopped the command (process group 4242, SIGTERM, exit 143)",
// "lost its lease and stopped the command (…, SIGTERM then SIGKILL, …)",
// "stopped before the command started".
QString stoppedWords(const nlohmann::json& stopped);

// The same, with what it implies for a reader deciding whether to run
// again (the Detail column's short form of the server's caveat):
// "…; external work it started may still be running".
QString stoppedSentence(const nlohmann::json& stopped);

// The server's sentence as a sentence: capitalised, with a full stop, and
// the times in it as the console shows times (formatTimesIn()).
QString sentence(const std::string& text);

} // namespace relctl::ui::jobstatus
