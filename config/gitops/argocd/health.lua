-- Argo CD health check for evals.evalrun.io/EvalRun.
--
-- Install it as the argocd-cm key resource.customizations.health.evals.evalrun.io_EvalRun (argocd-cm.yaml or
-- the kustomize Component in this directory). Without it Argo CD has no health for an EvalRun, so an
-- EvalRun counts as Healthy as soon as it exists, before the eval has run.
--
-- The EvalRun's status follows kstatus (Reconciling while in progress, Stalled when it failed) and adds
-- Succeeded (the run finished and collected every result), Passed (spec.successPolicy was met), Queued (the Job is
-- suspended, by spec.suspend or by Kueue) and, with spec.baseline, Regressed. The operator's status code:
-- internal/manager/assess/status.go; the conditions and their reasons: api/v1alpha1/evalrun_status.go.
--
--   not yet observed (no status, observedGeneration < generation, or
--     a new evals.evalrun.io/rerun value the operator has not started)  Progressing
--   failed (Succeeded=False or Stalled=True)                           Degraded, with the reason and message
--   regressed against its baseline (Regressed=True)                    Degraded, naming the regression
--   finished, and Passed=False (the success policy was not met)        Degraded
--   finished, still comparing with its baseline (Regressed=Unknown,
--     BaselinePending), or Passed not decided                          Progressing
--   finished, and Passed=True                                          Healthy (saying how the baseline compared)
--   queued (Queued=True), or spec.suspend without spec.queueName       Suspended
--   in progress (Reconciling=True)                                     Progressing, with the reason and message
--   anything else (unknown or malformed status)                        Progressing
--
-- The script uses only Lua's base and table libraries (Argo CD opens no string library for custom checks) and
-- never raises an error, whatever the object holds. test/gitops runs this file against every reason the API
-- defines, and against malformed objects.

local function text(v)
  if type(v) == "string" then
    return v
  end
  return ""
end

-- explain joins a condition's reason and message as "Reason: message".
local function explain(c)
  local reason, message = text(c.reason), text(c.message)
  if reason ~= "" and message ~= "" then
    return reason .. ": " .. message
  end
  if reason ~= "" then
    return reason
  end
  return message
end

-- describe puts a condition's reason and message after a sentence: "sentence (Reason): message".
local function describe(sentence, c)
  local reason, message = text(c.reason), text(c.message)
  if reason ~= "" then
    sentence = sentence .. " (" .. reason .. ")"
  end
  if message ~= "" then
    sentence = sentence .. ": " .. message
  end
  return sentence
end

-- conditionsByType returns the first condition of each type; entries that are not conditions are skipped.
local function conditionsByType(status)
  local found = {}
  if type(status.conditions) ~= "table" then
    return found
  end
  for _, c in ipairs(status.conditions) do
    if type(c) == "table" and type(c.type) == "string" and found[c.type] == nil then
      found[c.type] = c
    end
  end
  return found
end

local function is(c, status)
  return c ~= nil and c.status == status
end

local function health(obj)
  local waiting = { status = "Progressing", message = "Waiting for the EvalRun operator to report the run's status" }
  if type(obj) ~= "table" or type(obj.status) ~= "table" then
    return waiting
  end
  local status = obj.status
  local metadata = obj.metadata
  if type(metadata) == "table" and type(metadata.generation) == "number" then
    local observed = status.observedGeneration
    if type(observed) ~= "number" then
      return waiting
    end
    if observed < metadata.generation then
      return {
        status = "Progressing",
        message = "Waiting for the EvalRun operator to observe generation " .. metadata.generation ..
          " (it last observed generation " .. observed .. ")",
      }
    end
  end

  -- A new value of the evals.evalrun.io/rerun annotation starts a new attempt of a finished run; until the
  -- operator has started it, the status is the previous attempt's.
  local annotations = type(metadata) == "table" and metadata.annotations
  if type(status.attempt) == "table" and type(annotations) == "table" then
    local rerun = annotations["evals.evalrun.io/rerun"]
    if type(rerun) == "string" and rerun ~= "" and rerun ~= text(status.attempt.rerun) then
      return {
        status = "Progressing",
        message = "Waiting for the EvalRun operator to start the attempt asked for by evals.evalrun.io/rerun=" .. rerun,
      }
    end
  end

  local c = conditionsByType(status)
  local problems = {}
  if is(c.Succeeded, "False") or is(c.Stalled, "True") then
    local failed = c.Succeeded
    if not is(failed, "False") then
      failed = c.Stalled
    end
    table.insert(problems, describe("The run failed", failed))
  end
  local finished = is(c.Succeeded, "True") and #problems == 0
  if is(c.Regressed, "True") then
    table.insert(problems, describe("The run regressed against its baseline", c.Regressed))
  end
  if finished and is(c.Passed, "False") then
    table.insert(problems, describe("The run completed but did not meet its success policy", c.Passed))
  end
  if #problems > 0 then
    return { status = "Degraded", message = table.concat(problems, "; ") }
  end
  if finished then
    if is(c.Regressed, "Unknown") and c.Regressed.reason == "BaselinePending" then
      return { status = "Progressing", message = describe("The run completed; comparing it with its baseline", c.Regressed) }
    end
    if is(c.Passed, "True") then
      local message = describe("The run completed and met its success policy", c.Passed)
      if is(c.Regressed, "False") then
        message = message .. "; " .. describe("it did not regress against its baseline", c.Regressed)
      elseif c.Regressed ~= nil then
        message = message .. "; " .. describe("it was not compared with its baseline", c.Regressed)
      end
      return { status = "Healthy", message = message }
    end
    if c.Passed ~= nil then
      return { status = "Progressing", message = describe("The run completed; its success policy is not decided yet", c.Passed) }
    end
    return { status = "Progressing", message = "The run completed; waiting for the operator to judge its success policy" }
  end

  -- spec.suspend is ignored when spec.queueName is set (Kueue owns the Job's suspension): a run Kueue admitted
  -- runs whatever spec.suspend says, and Queued says when Kueue holds it.
  local suspend = false
  if type(obj.spec) == "table" and obj.spec.suspend == true then
    local queue = obj.spec.queueName
    suspend = type(queue) ~= "string" or queue == ""
  end
  if is(c.Queued, "True") or suspend then
    local message = ""
    if is(c.Queued, "True") then
      message = explain(c.Queued)
    end
    if message == "" and suspend then
      message = "The run is suspended by spec.suspend"
    end
    if message == "" then
      message = "The run is queued"
    end
    return { status = "Suspended", message = message }
  end
  if is(c.Reconciling, "True") then
    local message = ""
    if c.Succeeded ~= nil then
      message = explain(c.Succeeded)
    end
    if message == "" then
      message = explain(c.Reconciling)
    end
    if message == "" then
      message = "The run is in progress"
    end
    return { status = "Progressing", message = message }
  end
  return waiting
end

return health(obj)
