"""Errors a user can cause.  Each one says where (FILE:LINE:COL) and what to do."""


class UserError(Exception):
    """A mistake in the user's input or configuration: printed, never a traceback."""

    def __init__(self, message, file=None, line=None, col=None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col

    def location(self):
        if self.file is None:
            return ""
        name = str(self.file)
        if self.line is None:
            return name
        return f"{name}:{self.line}:{self.col or 1}"

    def __str__(self):
        loc = self.location()
        return f"{loc}: {self.message}" if loc else self.message


class ValidationErrors(UserError):
    """Several problems found at once (engine validate prints one per line)."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

    def __str__(self):
        return "\n".join(str(e) for e in self.errors)
