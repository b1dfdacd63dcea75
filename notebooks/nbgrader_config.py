# nbgrader configuration of the mlsysim_nb course. `make assignments` copies it into the course
# directory (build/course/); run nbgrader from there. No path is set here: nbgrader takes the course
# directory (CourseDirectory.root) and its gradebook (sqlite:///<root>/gradebook.db) from the folder it
# runs in, and the exchange directory (Exchange.root) from your hub's own configuration.
c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file

c.CourseDirectory.course_id = "mlsysim_nb"

# An answer's solution becomes a comment, not nbgrader's default `raise NotImplementedError()`, so a
# released notebook runs top to bottom: an unanswered exercise prints a reminder, and only the hidden
# autograder tests fail on it.
c.ClearSolutions.code_stub = {"python": "# your work here: set the answer variable above"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ExecutePreprocessor.timeout = 300

# Feedback shows the student's notebook with its grades, never the hidden tests that autograde put back.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
