#pragma once

#include "relctl/console.h"

#include <QWidget>
#include <vector>

class QCheckBox;
class QLabel;
class QTableView;

namespace relctl::ui {

class QueueModel;

// The queue of every environment (or of the selected one): each waiting
// candidate's job, release, generation, how long it has waited and its
// standing under the policy (next, wins or would be skipped by a pending
// supersession). Read-only: the queue is decided by the server.
class QueueView final : public QWidget
{
    Q_OBJECT

public:
    explicit QueueView(QWidget* parent = nullptr);

    QueueModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    void setEnvironments(const std::vector<relctl::EnvironmentRow>& environments);
    // The environment selected elsewhere; shown alone while "selected only" is on.
    void setSelectedEnvironment(const QString& env);
    void setNow(qint64 serverNowEstimate);
    void setStale(bool stale);
    // "3 waiting", or "nothing waiting": what the view's tab and the summary say.
    QString summary() const { return m_summaryText; }

signals:
    // The number of candidates waiting in all environments changed.
    void waitingChanged(int count);

private:
    void applyFilter();

    QueueModel* m_model;
    QTableView* m_table;
    QLabel* m_summary;
    QCheckBox* m_selectedOnly;
    QString m_selected;
    QString m_summaryText;
    int m_waiting = -1;
};

} // namespace relctl::ui
