// The live view: the running turns, the runs this server finished and the past runs (from /runs, read
// again every few seconds), and the chosen turn's events as they happen (server-sent events from
// /runs/<id>/events, each in its run-log form; a finished run's are told again from its log). The agents' and the run's states follow the events;
// what the agents stream is shown as it comes, bounded. Text from a run is hostile: it is only ever set
// as textContent, never parsed as markup.
(function () {
  "use strict";
  var REFRESH_MS = 2000;
  var STREAM_CHARS = 3000;    // the most characters of an agent's step shown (its last ones)
  var FINAL_CHARS = 100000;   // the most characters of an answer shown (the report keeps it whole)
  var TIMELINE_ITEMS = 2000;  // the most timeline lines kept (the oldest go first)
  var chosen = null;          // the run shown in the main area
  var watching = false;       // its events are still coming
  var wanted = null;          // a run the page asked for, shown once it starts
  var source = null;
  var timer = null;
  var agents = {};
  var cost = {};
  var run = {state: "running", final: false};
  var listed = {finished: "", models: ""};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  function $(id) { return document.getElementById(id); }
  function money(value) { return value ? "$" + value.toFixed(4) : "$0"; }
  function stamp(seconds) { return new Date(seconds * 1000).toLocaleTimeString(); }
  function tail(text, limit) { return text.length > limit ? "…" + text.slice(-(limit - 1)) : text; }
  function head(text, limit) { return text.length > limit ? text.slice(0, limit - 1) + "…" : text; }

  function post(path, body) {
    return fetch(path, {method: "POST", credentials: "same-origin",
      headers: {"content-type": "application/json"}, body: JSON.stringify(body || {})})
      .then(function (reply) {
        return reply.json().then(function (data) {
          if (!reply.ok) { throw new Error((data.error && data.error.message) || reply.statusText); }
          return data;
        });
      });
  }

  function schedule(ms) { clearTimeout(timer); timer = setTimeout(refresh, ms); }
  function refresh() {
    fetch("/runs", {credentials: "same-origin"}).then(function (reply) {
      if (!reply.ok) { throw new Error("the server answered " + reply.status + " (is the token right?)"); }
      return reply.json();
    }).then(function (data) {
      $("connection").textContent = "connected · " + data.live.length + " running · " +
        data.finished.length + " finished here · " + data.past.length + " past run(s)";
      listLive(data.live);
      listFinished(data.finished);
      listPast(data.past);
      offerAsking(data.ask);
      var asked = data.live.concat(data.finished).filter(function (r) { return r.id === wanted; })[0];
      var next = asked || data.live[0];
      if (next && (asked || !watching) && next.id !== chosen) { choose(next); }
      if (asked) { wanted = null; }
      $("idle").hidden = chosen !== null;
    }).catch(function (error) { $("connection").textContent = "not connected: " + error.message; })
      .finally(function () { schedule(REFRESH_MS); });
  }

  function listLive(live) {
    var list = $("live-runs");
    list.replaceChildren();
    live.forEach(function (entry) {
      var item = el("li", "live" + (chosen === entry.id ? " selected" : ""));
      item.dataset.run = entry.id;
      item.appendChild(el("span", "when", stamp(entry.started) + " · " + entry.model));
      item.appendChild(document.createTextNode(entry.question));
      item.addEventListener("click", function () { choose(entry); });
      list.appendChild(item);
    });
    if (!live.length) { list.appendChild(el("li", "hint", "none")); }
  }

  function reportLink(name, words) {
    var link = el("a", "report", words);
    link.href = "/runs/past/" + encodeURIComponent(name);
    return link;
  }

  function listFinished(finished) {
    var said = JSON.stringify(finished);
    if (said === listed.finished) { return; }  // unchanged: the list (and what is selected in it) stays
    listed.finished = said;
    var list = $("finished");
    list.replaceChildren();
    finished.forEach(function (entry) {
      var item = el("li", "finished-run");
      item.dataset.run = entry.id;
      item.dataset.state = entry.state;
      item.appendChild(el("span", "when", stamp(entry.started) + " · " + entry.model + " · session " +
        (entry.session_id || "(temporary)")));
      var question = el("p", "question", entry.question);
      question.title = "show this run's timeline";
      question.addEventListener("click", function () { choose(entry); });
      item.appendChild(question);
      var facts = el("p", "facts");
      facts.appendChild(el("span", "status " + entry.state.replace(" ", "-"), entry.state));
      if (entry.winner) { facts.appendChild(el("span", "winner", " winner: " + entry.winner)); }
      facts.appendChild(el("span", "reason", " · " + entry.reason));
      if (entry.report) { facts.appendChild(document.createTextNode(" · ")); facts.appendChild(reportLink(entry.report, "report")); }
      item.appendChild(facts);
      if (entry.answer) { item.appendChild(el("p", "answer", entry.answer)); }
      list.appendChild(item);
    });
    $("finished-runs").hidden = !finished.length;
  }

  function listPast(past) {
    var list = $("past-runs");
    list.replaceChildren();
    past.forEach(function (entry) {
      var item = el("li");
      item.appendChild(el("span", "when", (entry.started || "?") + " · " + entry.status + " · " + entry.turns +
        " turn(s)"));
      item.appendChild(reportLink(entry.name, entry.question || entry.name));
      list.appendChild(item);
    });
    if (!past.length) { list.appendChild(el("li", "hint", "none yet")); }
  }

  function offerAsking(asking) {
    $("ask").hidden = !asking;
    if (!asking || asking.models.join("\n") === listed.models) { return; }
    listed.models = asking.models.join("\n");
    var select = $("ask-model");
    select.replaceChildren();
    asking.models.forEach(function (model) { select.appendChild(el("option", "", model)); });
  }

  function choose(entry) {
    if (source) { source.close(); }
    chosen = entry.id;
    watching = true;
    agents = {};
    cost = {};
    run = {state: "running", final: false};
    $("idle").hidden = true;
    $("run").hidden = false;
    $("run").dataset.run = entry.id;
    $("run").dataset.model = entry.model;
    $("run-title").textContent = entry.model + " · session " + (entry.session_id || "(new)");
    $("run-question").textContent = entry.question;
    setRunState("running");
    ["run-verdict", "run-cost", "steer-said", "final-text"].forEach(function (id) { $(id).textContent = ""; });
    ["agents", "streams", "timeline"].forEach(function (id) { $(id).replaceChildren(); });
    $("final").hidden = true;
    (entry.agents || []).forEach(agentRow);
    source = new EventSource("/runs/" + encodeURIComponent(entry.id) + "/events");
    source.onmessage = function (message) { hear(JSON.parse(message.data)); };
  }

  function setRunState(state) {
    run.state = state;
    var badge = $("run-status");
    badge.textContent = state;
    badge.className = "status " + state.replace(" ", "-");
    var over = !watching;
    $("steer-send").disabled = over;
    $("stop").disabled = over;
  }

  function agentRow(id) {
    if (agents[id]) { return agents[id]; }
    var row = el("tr", "agent");
    row.dataset.agent = id;
    var cells = {};
    ["agent", "state", "answers", "vote", "tools", "cost", "now"].forEach(function (name) {
      cells[name] = el("td", name);
      row.appendChild(cells[name]);
    });
    cells.agent.textContent = id;
    cells.answers.textContent = "0";
    cells.tools.textContent = "0";
    $("agents").appendChild(row);
    var box = el("div", "stream");
    box.dataset.agent = id;
    var title = el("h4", "", id);
    var text = el("pre", "");
    box.appendChild(title);
    box.appendChild(text);
    box.hidden = true;
    $("streams").appendChild(box);
    agents[id] = {row: row, cells: cells, answers: 0, tools: 0, text: "", stream: box, streamText: text,
      streamTitle: title, step: 0};
    setAgentState(agents[id], "waiting");
    return agents[id];
  }

  function setAgentState(agent, state) {
    agent.state = state;
    agent.cells.state.textContent = state;
    agent.row.dataset.state = state;
  }

  function stream(agent, text, kind) {
    agent.text = tail(agent.text + text, STREAM_CHARS);
    agent.stream.hidden = false;
    agent.streamTitle.textContent = agent.row.dataset.agent + " · step " + agent.step +
      (kind === "content" ? "" : " · " + kind);
    agent.streamText.textContent = agent.text;
    agent.streamText.scrollTop = agent.streamText.scrollHeight;
    agent.cells.now.textContent = agent.text.slice(-160).replace(/\s+/g, " ");
  }

  function line(kind, agent, text) {
    var item = el("li", kind);
    var at = heardAt !== null ? heardAt : 0;  // when it happened, in seconds since the run started
    item.appendChild(el("span", "at", at.toFixed(1) + "s"));
    if (agent) { item.appendChild(el("b", "", agent + " ")); }
    item.appendChild(document.createTextNode(text));
    var list = $("timeline");
    var atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    list.appendChild(item);
    while (list.children.length > TIMELINE_ITEMS) { list.removeChild(list.firstChild); }
    if (atBottom) { list.scrollTop = list.scrollHeight; }
  }

  var STILL_AT_WORK = {waiting: true, working: true, restarted: true, presenting: true};
  function settleAgents(state) {  // the turn is over: no agent is still at work
    Object.keys(agents).forEach(function (id) {
      if (STILL_AT_WORK[agents[id].state]) { setAgentState(agents[id], state); }
    });
  }

  var HEARD = {
    Opened: function (e) { $("run-title").textContent = $("run").dataset.model + " · session " + e.session_id; },
    AgentText: function (e) {
      var agent = agentRow(e.agent_id);
      if (e.kind === "presentation") {
        if (agent.state !== "presenting") { setAgentState(agent, "presenting"); setRunState("presenting"); }
        $("final").hidden = false;
        $("final-title").textContent = "Final answer · " + e.agent_id + " (as it comes)";
        $("final-text").textContent = head($("final-text").textContent + e.text, FINAL_CHARS);
        return;
      }
      stream(agent, e.text, e.kind);
    },
    AgentStatus: function (e) {
      var agent = agentRow(e.agent_id);
      setAgentState(agent, e.status);
      if (e.status === "working") {
        agent.step += 1;
        agent.text = "";
      } else if (e.status === "answered") {
        agent.answers += 1;
        agent.cells.answers.textContent = String(agent.answers);
        line("answer", e.agent_id, "answered: " + e.detail);
      } else if (e.status === "restarted") {
        line("restart", e.agent_id, "restarted: " + e.detail);
      } else if (e.status === "failed" || e.status === "done") {
        line(e.status, e.agent_id, e.status + ": " + e.detail);
      }
    },
    VoteCast: function (e) {
      var agent = agentRow(e.voter);
      setAgentState(agent, "voted");
      agent.cells.vote.textContent = "→ " + e.target;
      line("vote", e.voter, "voted for " + e.target + ": " + (e.reason || "no reason given"));
    },
    ToolStarted: function (e) {
      var agent = agentRow(e.agent_id);
      agent.tools += 1;
      agent.cells.tools.textContent = String(agent.tools);
      line("tool", e.agent_id, "calls " + e.name + " " + JSON.stringify(e.arguments).slice(0, 300));
    },
    ToolFinished: function (e) {
      line("tool" + (e.ok ? "" : " failed"), e.agent_id, e.name + (e.ok ? " done" : " failed") + " in " +
        e.seconds.toFixed(2) + "s: " + e.summary);
    },
    CommandOutput: function (e) {
      var last = e.lines.concat(e.unfinished ? [e.unfinished] : []).slice(-3).join(" ⏎ ");
      agentRow(e.agent_id).cells.now.textContent = "$ " + e.command.slice(0, 120) + (last ? " · " + last : "");
    },
    CommandRan: function (e) {
      line("command", e.agent_id, "$ " + e.command + " → " + e.end + (e.exit_code === null ? "" :
        " (exit " + e.exit_code + ")") + " " + e.seconds.toFixed(2) + "s");
    },
    MemoryRetrieved: function (e) {
      line("recall", e.agent_id, "memory retrieved (" + e.reason + "): " + e.memories.length +
        " for “" + e.query + "”" + e.memories.map(function (m) { return "\n · " + m.text; }).join(""));
    },
    MemoryRecorded: function (e) {
      line("record", e.agent_id, "memory recorded: " + e.records.map(function (r) { return r.text; })
        .join(" · "));
    },
    Notice: function (e) {
      if (e.level === "warning" || e.level === "error" || e.level === "degraded") {
        line("notice", "", e.level + ": " + e.message);
      }
    },
    AgentUsage: function (e) {
      cost[e.agent_id] = (cost[e.agent_id] || 0) + (e.usage.cost_usd || 0);
      agentRow(e.agent_id).cells.cost.textContent = money(cost[e.agent_id]);
      var total = Object.keys(cost).reduce(function (sum, id) { return sum + cost[id]; }, 0);
      $("run-cost").textContent = "cost " + money(total);
    },
    FinalAnswer: function (e) {
      run.final = true;
      setAgentState(agentRow(e.agent_id), "presented");
      $("final").hidden = false;
      $("final-title").textContent = "Final answer · " + e.agent_id;
      $("final-text").textContent = head(e.text, FINAL_CHARS);
      line("final", e.agent_id, "final answer");
    },
    TurnEnded: function (e) {
      $("run-verdict").textContent = (e.winner ? "winner: " + e.winner + " · " : "") + e.reason;
      if (e.winner && agents[e.winner]) {
        agents[e.winner].row.classList.add("winner");
        setAgentState(agents[e.winner], "won");
      }
      settleAgents("done");
      setRunState(run.final ? "answered" : "no answer");
    },
    Steered: function (e) { line("steer", "you", "said: " + e.text); },
    SteeringMessage: function (e) { line("steer", "", "the agents' next step has: " + e.text); },
    Ended: function (e) {
      watching = false;
      if (source) { source.close(); }
      settleAgents(e.status === "ended" ? "done" : e.status === "cancelled" ? "cancelled" : "stopped");
      var state = e.status === "ended" ? (run.final ? "answered" : "no answer") : e.status;
      setRunState(state);
      line("end", "", "the run " + (e.status === "ended" ? "ended" : e.status) + (e.error ? ": " + e.error : ""));
      var item = document.querySelector("#live-runs li[data-run='" + chosen + "']");
      if (item) { item.remove(); }  // no longer running: it joins the finished runs
      schedule(0);
    }
  };

  var heardAt = null;
  function hear(event) {
    var handle = HEARD[event.type];
    heardAt = typeof event.at === "number" ? event.at : null;
    if (handle) { handle(event); }
    heardAt = null;
  }

  $("ask").addEventListener("submit", function (event) {
    event.preventDefault();
    var question = $("ask-text").value;
    if (!question.trim()) { $("ask-said").textContent = "write a question first"; return; }
    var body = {model: $("ask-model").value, question: question, session: $("ask-session").value.trim()};
    $("ask-send").disabled = true;
    post("/runs", body).then(function (asked) {
      wanted = asked.id;
      $("ask-text").value = "";
      $("ask-said").textContent = "asked: it shows here as it starts";
      schedule(0);
    }).catch(function (error) { $("ask-said").textContent = "not asked: " + error.message; })
      .finally(function () { $("ask-send").disabled = false; });
  });
  $("steer").addEventListener("submit", function (event) {
    event.preventDefault();
    var text = $("steer-text").value.trim();
    if (!text || !watching) { return; }
    post("/runs/" + encodeURIComponent(chosen) + "/steer", {message: text}).then(function () {
      $("steer-text").value = "";
      $("steer-said").textContent = "sent: the agents read it at their next step";
    }).catch(function (error) { $("steer-said").textContent = "not sent: " + error.message; });
  });
  $("stop").addEventListener("click", function () {
    if (!watching) { return; }
    post("/runs/" + encodeURIComponent(chosen) + "/stop").then(function () {
      $("steer-said").textContent = "stopping…";
    }).catch(function (error) { $("steer-said").textContent = "not stopped: " + error.message; });
  });
  window.addEventListener("error", function (e) {
    var box = $("report-errors");
    box.hidden = false;
    box.textContent += "script error: " + e.message + "\n";
  });
  refresh();
})();
