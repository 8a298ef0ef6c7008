#pragma once

#include "relctl/rehearsal.h"

#include <QHash>
#include <QString>
#include <QWidget>
#include <functional>
#include <memory>

class QBoxLayout;
class QComboBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableView;
class QTemporaryDir;
class QTextBrowser;
class QTreeWidget;
class QUrl;

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
// The run's controls and its verdict stay at the top, outside anything that
// scrolls; below them a splitter shares the rest between the verdicts and the
// tabs (chooser, step log, timeline): stacked in a narrow dock, side by side
// in a wide, short one.
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
    // Where Save report… proposes to write: the folder last saved to, else
    // the documents folder (else home), and a name dated in UTC, such as
    // relctl-rehearsal-2026-12-06-1430.html.
    QString proposedReportPath() const;
    // What opens the report, its folder or a saved copy; returns false when
    // no program could (as on a machine without a browser). Tests replace it.
    void setUrlOpener(std::function<bool(const QUrl&)> open);
    // The line under the verdict that says where a report went, or that no
    // program could open it; empty when hidden.
    QString notice() const;

    // Narrow: the timeline asks for 900 pixels, and the dock this page shares
    // with Approvals and Trace would take them from the console's own timeline.
    QSize sizeHint() const override;
    // The least the page needs at that width (the controls and the verdict
    // line wrapped, the panes at their smallest), not what it would like: a
    // scroll area around the page makes it at least this tall, and the
    // panes' preferred heights would have it scroll the Run button away.
    int heightForWidth(int width) const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    QWidget* createChooser();
    QWidget* createRunControls();
    QWidget* createNotice();
    QWidget* createVerdicts();
    void arrange(bool wide);
    void reportSaved(const QString& path);
    bool openUrl(const QUrl& url, const QString& failure);
    void showNotice(const QString& text, bool failed, bool saved);
    void run();
    void reportCancel();
    void chooseReportFile();
    void openReport();
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
    QWidget* m_controls = nullptr;
    QWidget* m_noticeBar = nullptr;
    QLabel* m_notice = nullptr;
    QPushButton* m_openSaved = nullptr;
    QPushButton* m_showSaved = nullptr;
    QBoxLayout* m_bar = nullptr;
    QSplitter* m_splitter = nullptr;
    // Side by side in a wide, short dock (below the timeline); stacked in a
    // tall, narrow one (at the side). Unset until the first resize.
    int m_wide = -1;
    TimelineWidget* m_timeline;
    QTabWidget* m_tabs;
    QTableView* m_log;
    QTreeWidget* m_verdicts;

    relctl::rehearsal::Report m_report;
    bool m_hasReport = false;
    // Each finished scenario's environment, shown again when its verdict is chosen.
    QHash<QString, relctl::TimelineSlice> m_slices;
    relctl::TimelineSlice m_shownSlice;
    // The last report saved, for the notice's Open and Show in folder.
    QString m_savedPath;
    std::function<bool(const QUrl&)> m_openUrl;
    // Where Open report writes the page for the browser; removed with the view.
    std::unique_ptr<QTemporaryDir> m_reportDir;
};

} // namespace relctl::ui
