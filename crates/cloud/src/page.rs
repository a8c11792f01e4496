//! Reading a listing to its end. Clouds page their describe calls in one of three ways: by offset
//! (Tencent `Offset`/`Limit`), by 1-based page number (Alibaba `PageNumber`, JD `pageNumber`), or by an
//! opaque next token (Alibaba's newer `NextToken`); [`all`] walks any of them with one set of end
//! conditions, so a client only says how to ask for one page and what the page held.

use std::future::Future;

/// How a listing is paged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Ask from item `offset` (0-based): the cursor is the number of items read so far.
    Offset,
    /// Ask for page `n` (1-based).
    PageNumber,
    /// Ask with the token the previous page gave (`None` for the first page).
    NextToken,
}

/// Where the next page starts, in the listing's own style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cursor {
    Offset(usize),
    Page(usize),
    Token(Option<String>),
}

impl Cursor {
    /// The offset or page number to ask for (0 for a token).
    pub fn number(&self) -> usize {
        match self {
            Cursor::Offset(n) | Cursor::Page(n) => *n,
            Cursor::Token(_) => 0,
        }
    }

    /// The token to ask with (`None` for the first page, and in the other styles).
    pub fn token(&self) -> Option<&str> {
        match self {
            Cursor::Token(t) => t.as_deref(),
            _ => None,
        }
    }
}

/// One page as the cloud answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// The listing's total, for the offset and page-number styles (a missing total reads as 0: done).
    pub total: u64,
    /// The token for the next page, for the next-token style (`None` or empty: the last page).
    pub next_token: Option<String>,
}

impl<T> Page<T> {
    /// A page of a listing that says its total.
    pub fn counted(items: Vec<T>, total: u64) -> Page<T> {
        Page { items, total, next_token: None }
    }

    /// A page of a listing that hands out next tokens.
    pub fn tokened(items: Vec<T>, next_token: Option<String>) -> Page<T> {
        Page { items, total: 0, next_token }
    }
}

/// Fetches pages until the listing ends and returns every item in order. It ends on an empty page
/// (whatever the total says, so a cloud that miscounts cannot keep us asking), when the items read
/// reach the total (offset and page styles), or when no next token comes (token style).
pub async fn all<T, E, F, Fut>(style: Style, mut fetch: F) -> Result<Vec<T>, E>
where
    F: FnMut(Cursor) -> Fut,
    Fut: Future<Output = Result<Page<T>, E>>,
{
    let mut out = Vec::new();
    let mut page = 1;
    let mut token = None;
    loop {
        let cursor = match style {
            Style::Offset => Cursor::Offset(out.len()),
            Style::PageNumber => Cursor::Page(page),
            Style::NextToken => Cursor::Token(token.take()),
        };
        let p = fetch(cursor).await?;
        let empty = p.items.is_empty();
        out.extend(p.items);
        let done = match style {
            Style::Offset | Style::PageNumber => empty || out.len() as u64 >= p.total,
            Style::NextToken => {
                token = p.next_token.filter(|t| !t.is_empty());
                empty || token.is_none()
            }
        };
        if done {
            return Ok(out);
        }
        page += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `data` in pages of `size`, recording each cursor asked for.
    fn serve(data: &[u32], size: usize, total: u64, style: Style) -> (Result<Vec<u32>, String>, Vec<Cursor>) {
        let mut asked = Vec::new();
        let r = block_on(all(style, |c: Cursor| {
            asked.push(c.clone());
            let start = match &c {
                Cursor::Offset(o) => *o,
                Cursor::Page(n) => (n - 1) * size,
                Cursor::Token(t) => t.as_deref().map_or(0, |t| t.parse().unwrap()),
            };
            let items: Vec<u32> = data.iter().skip(start).take(size).copied().collect();
            let next = (start + size < data.len()).then(|| (start + size).to_string());
            let page = match style {
                Style::NextToken => Page::tokened(items, next),
                _ => Page::counted(items, total),
            };
            async move { Ok::<_, String>(page) }
        }));
        (r, asked)
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    #[test]
    fn cursors_say_what_to_ask_for() {
        assert_eq!((Cursor::Offset(200).number(), Cursor::Offset(200).token()), (200, None));
        assert_eq!(Cursor::Page(3).number(), 3);
        assert_eq!(
            (Cursor::Token(Some("t".into())).number(), Cursor::Token(Some("t".into())).token()),
            (0, Some("t"))
        );
    }

    #[test]
    fn offsets_advance_by_items_read_and_stop_at_the_total() {
        let data: Vec<u32> = (0..250).collect();
        let (r, asked) = serve(&data, 100, 250, Style::Offset);
        assert_eq!(r.unwrap(), data);
        assert_eq!(asked, [Cursor::Offset(0), Cursor::Offset(100), Cursor::Offset(200)]);
    }

    #[test]
    fn page_numbers_start_at_one() {
        let data: Vec<u32> = (0..200).collect();
        let (r, asked) = serve(&data, 100, 200, Style::PageNumber);
        assert_eq!(r.unwrap().len(), 200);
        // Exactly two pages: the total is reached, no third (empty) page is asked for.
        assert_eq!(asked, [Cursor::Page(1), Cursor::Page(2)]);
    }

    #[test]
    fn an_empty_page_ends_even_when_the_total_says_more() {
        let (r, asked) = serve(&[1, 2, 3], 2, 1000, Style::PageNumber);
        assert_eq!(r.unwrap(), [1, 2, 3]);
        assert_eq!(asked.len(), 3);
        // No total at all (read as 0): one page.
        let (r, asked) = serve(&[1, 2, 3], 2, 0, Style::Offset);
        assert_eq!((r.unwrap(), asked.len()), (vec![1, 2], 1));
    }

    #[test]
    fn tokens_are_followed_until_none_comes() {
        let data: Vec<u32> = (0..5).collect();
        let (r, asked) = serve(&data, 2, 0, Style::NextToken);
        assert_eq!(r.unwrap(), data);
        assert_eq!(
            asked,
            [Cursor::Token(None), Cursor::Token(Some("2".into())), Cursor::Token(Some("4".into()))]
        );
    }

    #[test]
    fn an_empty_token_is_the_last_page_and_errors_stop_the_walk() {
        let r = block_on(all(Style::NextToken, |_| async {
            Ok::<_, String>(Page::tokened(vec![1], Some(String::new())))
        }));
        assert_eq!(r.unwrap(), [1]);
        let mut calls = 0;
        let r: Result<Vec<u32>, String> = block_on(all(Style::Offset, |_| {
            calls += 1;
            async { Err("throttled".to_string()) }
        }));
        assert_eq!((r.unwrap_err().as_str(), calls), ("throttled", 1));
    }
}
