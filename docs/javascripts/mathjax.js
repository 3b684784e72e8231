// MathJax settings for pymdownx.arithmatex (generic mode): \( \) inline, \[ \] display; loaded before MathJax
window.MathJax = {
  tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true },
  options: { ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex" }
};
