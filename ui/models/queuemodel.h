#pragma once

// The queue view's table: every candidate waiting for an environment, in the
// order its queue serves them, fed with the environments a worker read
// (relctl::EnvironmentRow::queue). A release manager reads it to see who is
// next, who an approval would skip and how long each has waited.

#include "relctl/console.h"

#include <QAbstractTableModel>
#include <vector>

namespace relctl::ui {

class QueueModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    // The standing is what a release manager reads here, so it comes right
    // after the job: in a narrow dock it is what shows before the scroll bar.
    enum class Column : int { Environment, Position, Job, Standing, Waiting, Generation, Release, Count };

    enum Roles : int {
        EnvironmentName = Qt::UserRole + 1, // QString
        Candidate,                          // qint64: the candidate's id
    };

    explicit QueueModel(QObject* parent = nullptr);

    // Replaces the rows with the queues of these environments (in their
    // order, each queue in serving order). Also takes the server's clock of
    // the read for the "waiting for" column.
    void setEnvironments(const std::vector<relctl::EnvironmentRow>& environments);
    // Only this environment's queue (empty: every environment's).
    void setEnvironmentFilter(const QString& env);
    QString environmentFilter() const { return m_filter; }
    // The server's "now" the waiting times are computed against.
    void setNow(qint64 serverNowEstimate);
    // While the console cannot reach the database the rows are what it last
    // read: shown greyed, with the waiting times stopped.
    void setStale(bool stale);
    bool isStale() const { return m_stale; }

    // What a candidate's place means under its environment's policy: "next",
    // "wins supersession #3 if approved", "skipped if supersession #3 is approved".
    static QString standing(const relctl::QueuedCandidate& c, const std::string& policy);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        std::string env;
        std::string policy;
        relctl::QueuedCandidate candidate;
    };
    void rebuild();

    std::vector<relctl::EnvironmentRow> m_environments;
    std::vector<Row> m_rows;
    QString m_filter;
    qint64 m_now = 0;
    bool m_stale = false;
};

} // namespace relctl::ui
