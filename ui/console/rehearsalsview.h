#pragma once

#include "relctl/rehearsal.h"

#include <QHash>
#include <QString>
#include <QWidget>
#include <memory>

class QComboBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableView;
class QTemporaryDir;
class QTextBrowser;
class QTreeWidget;

namespace relctl::ui {

class ConsoleSession;
class RehearsalRunner;
class RehearsalStepModel;
class TimelineWidget;

// The Rehearsals page: choose scenarios (and optionally an environment whose
// settings they copy), run them on a scratch database of the connected
// server, and watch the live step log and the scratch environment's leases
// and markers on a timeline of its own; then a verdict per invariant, and the
// HTML report to open or save. The session's backend plays the run, off the
// GUI thread; the page only shows what the session reports.
class RehearsalsView final : public QWidget
{
    Q_OBJECT

public:
    // The session runs the rehearsals (on the server it reads) and says
    // which environments exist (for "like").
    explicit RehearsalsView(ConsoleSession* session, QWidget* parent = nullptr);
    ~RehearsalsView() override;

    // The session's runner (ConsoleSession::rehearsalRunner): null on a
    // backend without one.
    RehearsalRunner* runner() const;
    // What the timeline was last given: the running scenario's environment,
    // or the chosen scenario's once it finished.
    const relctl::TimelineSlice& shownSlice() const { return m_shownSlice; }
    // What Save report… does once a file is chosen; false when nothing was
    // written (no report yet, or the file could not be written).
    bool saveReport(const QString& path);

    // Narrow: the timeline asks for 900 pixels, and the dock this page shares
    // with Approvals and Trace would take them from the console's own timeline.
    QSize sizeHint() const override;

private:
    QWidget* createChooser();
    QWidget* createRunControls();
    void run();
    void reportCancel();
    void chooseReportFile();
    void openReport();
    void updateLike();
    void updateButtons();
    void explainSelected();
    void showSlice(const relctl::TimelineSlice& slice, bool following);
    void scenarioStarted(const relctl::rehearsal::Scenario& scenario, int index, int count);
    void scenarioFinished(const relctl::rehearsal::ScenarioResult& result);
    void finished(const relctl::rehearsal::Report& report, const QString& error);
    enum class Tone { Plain, Passed, Failed };
    void showStatus(const QString& text, Tone tone = Tone::Plain);

    ConsoleSession* m_session;
    RehearsalStepModel* m_steps;
    QListWidget* m_scenarios = nullptr;
    QTextBrowser* m_explanation = nullptr;
    QComboBox* m_like = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_save = nullptr;
    QPushButton* m_open = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    TimelineWidget* m_timeline;
    QTabWidget* m_tabs;
    QTableView* m_log;
    QTreeWidget* m_verdicts;

    relctl::rehearsal::Report m_report;
    bool m_hasReport = false;
    // Each finished scenario's environment, shown again when its verdict is chosen.
    QHash<QString, relctl::TimelineSlice> m_slices;
    relctl::TimelineSlice m_shownSlice;
    // Where Open report writes the page for the browser; removed with the view.
    std::unique_ptr<QTemporaryDir> m_reportDir;
};

} // namespace relctl::ui
