"""Sample values of the handler kinds' template variables: what `engine
validate` renders each template with (handlers/base.py)."""

ENTRY = {"tool": "shell", "error": "kubectl: command not found", "input": "kubectl get pods", "count": 2,
         "first": "2026-01-01 10:00", "last": "2026-01-02 11:00", "project": "/project", "sessions": ["s"], "k": "x",
         "examples": ["kubectl get svc", "kubectl get pods"], "error_quoted": '"kubectl: command not found"',
         "input_quoted": '"kubectl get pods"', "examples_quoted": ['"kubectl get pods"', '"kubectl get svc"'],
         "project_quoted": '"/project"'}
SAMPLES = {"tool": "shell", "entries": [ENTRY], "total": 3, "more": 2, "cwd": "/project",
           "project": "/project", "others": [dict(ENTRY, project="/other", project_quoted='"/other"')], "others_total": 1, "fill_pct": 78,
           "tokens": 156000, "window": 200000, "threshold": 70, "thresholds": [70, 80, 90],
           "top": [{"tool": "shell", "tokens": 5000, "bytes": 20000, "calls": 3, "share": 61.0}],
           "total_tokens": 8200, "effort": "medium", "model": "opus", "trigger": "auto",
           "custom_instructions": "keep the test names", "source": "startup", "effort_keyword": "ultrathink",
           "asked_effort": "high", "expensive": True, "deeper": True}


def pick(*names):
    """The samples of these variables."""
    return {n: SAMPLES[n] for n in names}
