// The live view: the running turns and the past runs (from /runs, read again every few seconds), and the
// chosen turn's events as they happen (server-sent events from /runs/<id>/events, each in its run-log
// form). Text from a run is hostile: it is only ever set as textContent, never parsed as markup.
(function () {
  "use strict";
  var REFRESH_MS = 2000;
  var chosen = null;
  var source = null;
  var started = 0;
  var agents = {};
  var cost = {};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  function $(id) { return document.getElementById(id); }
  function money(value) { return value ? "$" + value.toFixed(4) : "$0"; }
  function stamp(seconds) { return new Date(seconds * 1000).toLocaleTimeString(); }

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

  function refresh() {
    fetch("/runs", {credentials: "same-origin"}).then(function (reply) {
      if (!reply.ok) { throw new Error("the server answered " + reply.status + " (is the token right?)"); }
      return reply.json();
    }).then(function (data) {
      $("connection").textContent = "connected · " + data.live.length + " running · " +
        data.past.length + " past run(s)";
      listLive(data.live);
      listPast(data.past);
      if (chosen === null && data.live.length) { choose(data.live[0]); }
    }).catch(function (error) { $("connection").textContent = "not connected: " + error.message; })
      .finally(function () { setTimeout(refresh, REFRESH_MS); });
  }

  function listLive(live) {
    var list = $("live-runs");
    list.replaceChildren();
    live.forEach(function (run) {
      var item = el("li", "live" + (chosen === run.id ? " selected" : ""));
      item.dataset.run = run.id;
      item.appendChild(el("span", "when", stamp(run.started) + " · " + run.model));
      item.appendChild(document.createTextNode(run.question));
      item.addEventListener("click", function () { choose(run); });
      list.appendChild(item);
    });
    if (!live.length) { list.appendChild(el("li", "hint", "none")); }
  }

  function listPast(past) {
    var list = $("past-runs");
    list.replaceChildren();
    past.forEach(function (run) {
      var item = el("li");
      item.appendChild(el("span", "when", (run.started || "?") + " · " + run.status + " · " + run.turns +
        " turn(s)"));
      var link = el("a", "", run.question || run.name);
      link.href = "/runs/past/" + encodeURIComponent(run.name);
      item.appendChild(link);
      list.appendChild(item);
    });
    if (!past.length) { list.appendChild(el("li", "hint", "none yet")); }
  }

  function choose(run) {
    if (source) { source.close(); }
    chosen = run.id;
    started = run.started;
    agents = {};
    cost = {};
    $("idle").hidden = true;
    $("run").hidden = false;
    $("run").dataset.run = run.id;
    $("run").dataset.model = run.model;
    $("run-title").textContent = run.model + " · session " + (run.session_id || "(new)");
    $("run-question").textContent = run.question;
    setStatus("running");
    $("run-verdict").textContent = "";
    $("run-cost").textContent = "";
    $("agents").replaceChildren();
    $("timeline").replaceChildren();
    $("final").hidden = true;
    $("steer-said").textContent = "";
    run.agents.forEach(agentRow);
    source = new EventSource("/runs/" + encodeURIComponent(run.id) + "/events");
    source.onmessage = function (message) { hear(JSON.parse(message.data)); };
  }

  function setStatus(status) {
    var badge = $("run-status");
    badge.textContent = status;
    badge.className = "status " + status;
    var over = status !== "running";
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
    cells.now.textContent = "";
    $("agents").appendChild(row);
    agents[id] = {row: row, cells: cells, answers: 0, tools: 0, text: ""};
    return agents[id];
  }

  function line(kind, agent, text) {
    var item = el("li", kind);
    var at = heardAt !== null ? heardAt : (Date.now() / 1000) - started;  // when it happened, if said
    item.appendChild(el("span", "at", at.toFixed(1) + "s"));
    if (agent) { item.appendChild(el("b", "", agent + " ")); }
    item.appendChild(document.createTextNode(text));
    var list = $("timeline");
    var atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    list.appendChild(item);
    if (atBottom) { list.scrollTop = list.scrollHeight; }
  }

  var HEARD = {
    Opened: function (e) { $("run-title").textContent = $("run").dataset.model + " · session " + e.session_id; },
    AgentText: function (e) {
      var agent = agentRow(e.agent_id);
      agent.text = (agent.text + e.text).slice(-400);
      agent.cells.now.textContent = agent.text.replace(/\s+/g, " ");
    },
    AgentStatus: function (e) {
      var agent = agentRow(e.agent_id);
      agent.cells.state.textContent = e.status;
      if (e.status === "answered") {
        agent.answers += 1;
        agent.cells.answers.textContent = String(agent.answers);
        line("answer", e.agent_id, "answered: " + e.detail);
      } else if (e.status === "restarted") {
        agent.text = "";
        line("restart", e.agent_id, "restarted: " + e.detail);
      } else if (e.status === "failed") {
        line("failed", e.agent_id, "failed: " + e.detail);
      }
    },
    VoteCast: function (e) {
      agentRow(e.voter).cells.vote.textContent = "→ " + e.target;
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
      $("final").hidden = false;
      $("final-title").textContent = "Final answer · " + e.agent_id;
      $("final-text").textContent = e.text;
      line("final", e.agent_id, "final answer");
    },
    TurnEnded: function (e) {
      $("run-verdict").textContent = (e.winner ? "winner: " + e.winner + " · " : "") + e.reason;
      if (e.winner && agents[e.winner]) { agents[e.winner].row.classList.add("winner"); }
    },
    Steered: function (e) { line("steer", "you", "said: " + e.text); },
    SteeringMessage: function (e) { line("steer", "", "the agents' next step has: " + e.text); },
    Ended: function (e) {
      setStatus(e.status === "ended" ? "answered" : e.status);
      line("end", "", "the run " + (e.status === "ended" ? "ended" : e.status) + (e.error ? ": " + e.error : ""));
      if (source) { source.close(); }
      chosen = null;
    }
  };

  var heardAt = null;
  function hear(event) {
    var handle = HEARD[event.type];
    heardAt = typeof event.at === "number" ? event.at : null;
    if (handle) { handle(event); }
    heardAt = null;
  }

  $("steer").addEventListener("submit", function (event) {
    event.preventDefault();
    var text = $("steer-text").value.trim();
    if (!text || chosen === null) { return; }
    post("/runs/" + encodeURIComponent(chosen) + "/steer", {message: text}).then(function () {
      $("steer-text").value = "";
      $("steer-said").textContent = "sent: the agents read it at their next step";
    }).catch(function (error) { $("steer-said").textContent = "not sent: " + error.message; });
  });
  $("stop").addEventListener("click", function () {
    if (chosen === null) { return; }
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
