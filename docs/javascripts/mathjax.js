// MathJax settings for pymdownx.arithmatex (generic mode): \( \) inline, \[ \] display; loaded before MathJax,
// which the site serves itself (javascripts/mathjax/, copied from a PyPI package by hooks/docs_site.py)
window.MathJax = {
  tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true },
  options: { ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex" }
};
