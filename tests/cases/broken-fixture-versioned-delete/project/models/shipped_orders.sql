-- Each order with the shipments sent within four hours of it.
SELECT o.order_id, o.customer_id, o.amount, o.ordered_at, s.shipment_id, s.carrier, s.shipped_at
FROM source('orders') AS o
JOIN source('shipments') AS s
  ON o.order_id = s.order_id
 AND s.shipped_at BETWEEN o.ordered_at AND o.ordered_at + INTERVAL '4' HOUR
