-- Each order priced in euros at the rate valid when it was placed: a temporal join reads
-- the rates as a versioned table, AS OF the order's time.
SELECT o.order_id, o.amount, o.currency, r.rate, o.amount * r.rate AS amount_eur, o.ordered_at
FROM source('orders') AS o
LEFT JOIN source('rates') FOR SYSTEM_TIME AS OF o.ordered_at AS r
  ON o.currency = r.currency
