-- Revenue in euros per currency, each order converted at the rate valid when it was
-- placed: an inner temporal join drops the orders placed before their currency's first
-- rate, and an aggregate sums the rest.
SELECT o.currency, COUNT(*) AS orders, SUM(o.amount * r.rate) AS revenue_eur
FROM source('orders') AS o
JOIN source('rates') FOR SYSTEM_TIME AS OF o.ordered_at AS r
  ON o.currency = r.currency
GROUP BY o.currency
