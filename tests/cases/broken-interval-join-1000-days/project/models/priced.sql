SELECT o.order_id, s.shipment_id
FROM source('orders') AS o
JOIN source('shipments') AS s
  ON o.order_id = s.order_id
 AND s.shipped_at BETWEEN o.ordered_at AND o.ordered_at + INTERVAL '1000' DAY
