//! Ranking tools by what a user asks for: a lexical ranker (BM25F) over each tool's name,
//! title, description, toolkit, tags and inputs, built once per catalog (issue #42).
//!
//! Text is read into terms by [`text`] (words split at `_` and camelCase, stop words dropped,
//! light stems) and a query's words also look for their [`synonyms`] ("fetch" for `get`,
//! "remove" for `delete`) at a lower weight. Everything the ranking needs is in the binary and
//! the catalog: no model, no network.
//!
//! The index is compact: a sorted vocabulary and one flat posting list (tool position and a
//! 16-bit saturated term weight per posting, six bytes), so a search touches only the postings
//! of the query's terms, and its cost is theirs, not the catalog's (100,000 tools: well under
//! 50 ms).

mod similar;
mod synonyms;
mod text;

use std::collections::HashMap;
use std::sync::Arc;

use crate::catalog::Tool;

pub use similar::alike;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// How much a synonym counts beside the word the user wrote.
const SYNONYM_WEIGHT: f32 = 0.55;
/// How much a word the query's last word begins counts (search as one types).
const PREFIX_WEIGHT: f32 = 0.4;
/// How much a query that covers a tool's whole name multiplies its score (see
/// [`Index::name_coverage`]).
const NAME_COVERAGE_BOOST: f32 = 1.0;
/// At most this many vocabulary terms a prefix stands for.
const MAX_PREFIX_TERMS: usize = 24;
/// Tools sampled to estimate each field's average length.
const LENGTH_SAMPLE: usize = 4096;

/// The parts of a tool the ranking reads, each with its weight and length normalisation
/// (BM25F): a word in the name says more than one in the tenth sentence of a description.
#[derive(Debug, Clone, Copy)]
enum Field {
    Name,
    Title,
    Lead,
    Description,
    Tags,
    InputNames,
    InputDescriptions,
}

impl Field {
    const ALL: [Self; 7] = [
        Self::Name,
        Self::Title,
        Self::Lead,
        Self::Description,
        Self::Tags,
        Self::InputNames,
        Self::InputDescriptions,
    ];

    /// (weight, b): the field's boost and how much its length normalises a term's count.
    fn params(self) -> (f32, f32) {
        match self {
            Self::Name => (3.0, 0.3),
            Self::Title => (2.0, 0.3),
            Self::Lead => (1.5, 0.5),
            Self::Description => (1.0, 0.75),
            Self::Tags => (1.0, 0.0),
            Self::InputNames => (0.6, 0.5),
            Self::InputDescriptions => (0.25, 0.75),
        }
    }

    /// The field's text in `doc`, as terms.
    fn terms(self, doc: &Document<'_>) -> Vec<String> {
        match self {
            Self::Name => text::terms(doc.name),
            Self::Title => doc.title.map(text::terms).unwrap_or_default(),
            Self::Lead => text::terms(lead(doc.description)),
            Self::Description => text::terms(doc.description),
            Self::Tags => doc.tags.iter().flat_map(|t| text::terms(t)).collect(),
            Self::InputNames => doc.inputs.iter().flat_map(|(name, _)| text::terms(name)).collect(),
            Self::InputDescriptions => doc.inputs.iter().flat_map(|(_, about)| text::terms(about)).collect(),
        }
    }
}

/// What the ranking reads of one tool, whatever its origin (a catalog's tool, or one a client
/// listed from a server without search).
#[derive(Debug, Clone, Default)]
pub struct Document<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its title, if any.
    pub title: Option<&'a str>,
    /// Its description.
    pub description: &'a str,
    /// Its tags (a catalog's toolkit among them).
    pub tags: Vec<&'a str>,
    /// Its inputs: name and description.
    pub inputs: Vec<(&'a str, &'a str)>,
}

impl<'a> Document<'a> {
    /// A catalog tool as its latest version shows it.
    pub fn of(tool: &'a Tool) -> Self {
        let version = tool.latest();
        Self {
            name: &tool.name,
            title: tool.title.as_deref(),
            description: &version.description,
            tags: tool.tags_with_toolkit().collect(),
            inputs: version
                .inputs
                .iter()
                .map(|p| (p.name.as_str(), p.description.as_str()))
                .collect(),
        }
    }
}

/// The first sentence or line of a description: what it is, before the details.
fn lead(description: &str) -> &str {
    let line = description.trim_start().split('\n').next().unwrap_or_default();
    match line.find(". ") {
        Some(end) => &line[..end],
        None => line,
    }
}

/// The search index of one catalog's tools (by their position in the catalog).
#[derive(Debug, Default)]
pub struct Index {
    /// The vocabulary, sorted: a term's id is its position.
    terms: Vec<Box<str>>,
    /// Term `i`'s postings are `docs[offsets[i]..offsets[i + 1]]`, and their `weights`.
    offsets: Vec<u32>,
    docs: Vec<u32>,
    /// Each posting's saturated BM25F term weight, `tf / (k1 + tf)` scaled to `u16::MAX`.
    weights: Vec<u16>,
    /// Tool `i`'s name terms are `names[name_offsets[i]..name_offsets[i + 1]]` (ids before the
    /// vocabulary is sorted are remapped): how much of a name a query covers.
    names: Vec<u32>,
    name_offsets: Vec<u32>,
    /// How many tools were indexed.
    count: u32,
}

impl Index {
    /// Indexes catalog tools, each by its latest version.
    pub fn of_tools(tools: &[Arc<Tool>]) -> Self {
        Self::build(tools.len(), |i| Document::of(&tools[i]))
    }

    /// Indexes `count` documents, the `i`th being `doc(i)` (read once, and a sample of them
    /// once more for the fields' average lengths).
    pub fn build<'a>(count: usize, doc: impl Fn(usize) -> Document<'a>) -> Self {
        let averages = average_lengths(count, &doc);
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, u16)>> = Vec::new();
        let mut counts: HashMap<u32, f32> = HashMap::new();
        let mut names: Vec<u32> = Vec::new();
        let mut name_offsets: Vec<u32> = Vec::with_capacity(count + 1);
        name_offsets.push(0);
        for position in 0..count {
            let document = doc(position);
            counts.clear();
            for term in Field::Name.terms(&document) {
                let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
                names.push(*ids.entry(term).or_insert(next));
            }
            name_offsets.push(u32::try_from(names.len()).unwrap_or(u32::MAX));
            for (field, average) in Field::ALL.iter().zip(averages) {
                let terms = field.terms(&document);
                let (weight, b) = field.params();
                let norm = 1.0 - b + b * terms.len() as f32 / average.max(1.0);
                for term in terms {
                    let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
                    let id = *ids.entry(term).or_insert(next);
                    *counts.entry(id).or_default() += weight / norm;
                }
            }
            for (&id, &tf) in &counts {
                let index = id as usize;
                if index >= postings.len() {
                    postings.resize_with(index + 1, Vec::new);
                }
                let saturated = tf / (K1 + tf);
                postings[index].push((position as u32, (saturated * f32::from(u16::MAX)) as u16));
            }
        }
        let mut vocabulary: Vec<(String, u32)> = ids.into_iter().collect();
        vocabulary.sort_unstable();
        let mut sorted_id = vec![0u32; vocabulary.len()];
        for (position, (_, id)) in vocabulary.iter().enumerate() {
            sorted_id[*id as usize] = position as u32;
        }
        for id in &mut names {
            *id = sorted_id[*id as usize];
        }
        postings.resize_with(vocabulary.len(), Vec::new);
        let total = postings.iter().map(Vec::len).sum();
        let mut index = Self {
            terms: Vec::with_capacity(vocabulary.len()),
            offsets: Vec::with_capacity(vocabulary.len() + 1),
            docs: Vec::with_capacity(total),
            weights: Vec::with_capacity(total),
            count: u32::try_from(count).unwrap_or(u32::MAX),
            names,
            name_offsets,
        };
        index.offsets.push(0);
        for (term, id) in vocabulary {
            let mut list = std::mem::take(&mut postings[id as usize]);
            list.sort_unstable_by_key(|&(doc, _)| doc);
            index.docs.extend(list.iter().map(|&(doc, _)| doc));
            index.weights.extend(list.iter().map(|&(_, w)| w));
            index.terms.push(term.into_boxed_str());
            index.offsets.push(u32::try_from(index.docs.len()).unwrap_or(u32::MAX));
        }
        index
    }

    /// The tools (positions) matching `query` that `keep` accepts, best first, with their
    /// scores; at most `limit`. Equal scores keep catalog (name) order.
    pub fn search(&self, query: &str, limit: usize, keep: impl Fn(usize) -> bool) -> Vec<(usize, f32)> {
        self.ranked(self.query_terms(query, true), limit, keep)
    }

    /// Like [`Index::search`], with the query's own words only: no synonyms, no prefixes.
    pub(crate) fn search_exact(&self, query: &str, limit: usize) -> Vec<(usize, f32)> {
        self.ranked(self.query_terms(query, false), limit, |_| true)
    }

    fn ranked(&self, mut wanted: Vec<(usize, f32)>, limit: usize, keep: impl Fn(usize) -> bool) -> Vec<(usize, f32)> {
        if wanted.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut scores = vec![0f32; self.count as usize];
        let n = self.count as f32;
        wanted.sort_unstable_by_key(|&(term, _)| term);
        for &(term, weight) in &wanted {
            let range = self.offsets[term] as usize..self.offsets[term + 1] as usize;
            let df = range.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let scale = weight * idf * (K1 + 1.0) / f32::from(u16::MAX);
            for (&doc, &w) in self.docs[range.clone()].iter().zip(&self.weights[range]) {
                scores[doc as usize] += scale * f32::from(w);
            }
        }
        let mut hits: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|&(doc, score)| score > 0.0 && keep(doc))
            .map(|(doc, score)| {
                (
                    doc,
                    score * (1.0 + NAME_COVERAGE_BOOST * self.name_coverage(doc, &wanted)),
                )
            })
            .collect();
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(order);
        hits
    }

    /// The query's terms with their weights: each word itself (1), its synonyms, and, for the
    /// last word, the vocabulary terms it begins; one weight per term, the largest.
    fn query_terms(&self, query: &str, expand: bool) -> Vec<(usize, f32)> {
        let mut wanted: HashMap<usize, f32> = HashMap::new();
        let mut add = |term: Option<usize>, weight: f32| {
            if let Some(term) = term {
                let entry = wanted.entry(term).or_default();
                *entry = entry.max(weight);
            }
        };
        let words = text::words(query);
        for (i, word) in words.iter().enumerate() {
            for synonym in synonyms::of(word).iter().filter(|_| expand) {
                add(self.term(synonym), SYNONYM_WEIGHT);
            }
            if text::is_stop_word(word) {
                continue;
            }
            let stem = text::stem(word);
            add(self.term(&stem), 1.0);
            if expand && i + 1 == words.len() && word.len() >= 3 {
                for term in self.prefixed(word) {
                    add(Some(term), PREFIX_WEIGHT);
                }
            }
        }
        wanted.into_iter().collect()
    }

    /// How much of tool `doc`'s name the query's terms (sorted) cover, from 0 to 1, each name
    /// term by the weight the query gives it: a name is what a tool does, in short, so a tool
    /// whose whole name the request says is likelier the one meant than one that shares a word.
    fn name_coverage(&self, doc: usize, wanted: &[(usize, f32)]) -> f32 {
        let name = &self.names[self.name_offsets[doc] as usize..self.name_offsets[doc + 1] as usize];
        if name.is_empty() {
            return 0.0;
        }
        let covered: f32 = name
            .iter()
            .filter_map(|&term| {
                let i = wanted.binary_search_by_key(&(term as usize), |&(t, _)| t).ok()?;
                Some(wanted[i].1)
            })
            .sum();
        covered / name.len() as f32
    }

    /// The id of `term`, if any tool has it.
    fn term(&self, term: &str) -> Option<usize> {
        self.terms.binary_search_by(|t| (**t).cmp(term)).ok()
    }

    /// The ids of the terms that begin with `prefix`, at most [`MAX_PREFIX_TERMS`].
    fn prefixed<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = usize> + 'a {
        let start = self.terms.partition_point(|t| **t < *prefix);
        (start..self.terms.len())
            .take_while(move |&i| self.terms[i].starts_with(prefix))
            .take(MAX_PREFIX_TERMS)
    }

    /// The bytes the index holds (vocabulary and postings), for footprint reports.
    pub fn heap_bytes(&self) -> usize {
        self.terms
            .iter()
            .map(|t| t.len() + size_of::<Box<str>>())
            .sum::<usize>()
            + self.offsets.len() * 4
            + self.docs.len() * 4
            + self.weights.len() * 2
            + (self.names.len() + self.name_offsets.len()) * 4
    }
}

/// Each field's average length in terms, estimated from evenly spaced tools (BM25 needs the
/// average, not every length; one pass over the text, not two).
fn average_lengths<'a>(count: usize, doc: &impl Fn(usize) -> Document<'a>) -> [f32; 7] {
    let step = count.div_ceil(LENGTH_SAMPLE).max(1);
    let sample: Vec<Document<'a>> = (0..count).step_by(step).map(doc).collect();
    let mut averages = [0f32; 7];
    for (average, field) in averages.iter_mut().zip(Field::ALL) {
        let total: usize = sample.iter().map(|d| field.terms(d).len()).sum();
        *average = total as f32 / sample.len().max(1) as f32;
    }
    averages
}

#[cfg(test)]
mod tests;
