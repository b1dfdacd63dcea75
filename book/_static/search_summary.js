// Search results with excerpts of the page's own text. Sphinx builds each result's excerpt from the text
// of the page's [role="main"], which in this theme starts with the theme's buttons and the page's
// contents list, so every excerpt read "System Settings Light Dark ... Contents". Here the excerpt is
// read from the article alone (headings' link marks, scripts and styles removed).
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    for (const query of [".headerlink", "script", "style", ".bd-toc", ".header-article", ".prev-next-area"]) {
      doc.querySelectorAll(query).forEach((el) => el.remove());
    }
    const article = doc.querySelector("article.bd-article") || doc.querySelector('[role="main"]');
    if (!article) return "";
    const part = anchor ? article.querySelector(anchor) : null;
    return (part || article).textContent;
  };
});
