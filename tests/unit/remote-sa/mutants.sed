# One codec mutation per line (sed expressions on userspace/remote-sa/rsa_mad.c);
# tests/unit/remote-sa/mutants checks that test_rsa_mad.c catches each.
s/if (memcmp(ans->pr.sgid, rq->pr.sgid, 16) || memcmp(ans->pr.dgid, rq->pr.dgid, 16))/if (memcmp(ans->pr.sgid, rq->pr.sgid, 16))/
s/cpi->resp_time = w \& 0x1f;/cpi->resp_time = w \& 0xff;/
s/cpi->cap_mask2 = w >> 5;/cpi->cap_mask2 = w >> 4;/
s/memcpy(raw + 8, pr->dgid, 16)/memcpy(raw + 24, pr->dgid, 16)/
s/memcpy(raw + 24, pr->sgid, 16);/memcpy(raw + 8, pr->sgid, 16);/
s/(pr->flow_label \& 0xfffff) << 8/(pr->flow_label \& 0xffffff) << 8/
s/pr->flow_label = (w >> 8) \& 0xfffff/pr->flow_label = (w >> 8) \& 0xffffff/
s/(pr->sl \& 0xf)));/(pr->sl \& 0xff)));/
s/pr->sl = raw\[53\] \& 0xf;/pr->sl = raw[53] \& 0x1f;/
s/pr->qos_class = get16(raw + 52) >> 4;/pr->qos_class = get16(raw + 52) >> 3;/
s/put16(raw + 50, pr->pkey);/put16(raw + 50, (uint16_t)(pr->pkey \& 0x7fff));/
s/raw\[54\] = (uint8_t)((pr->mtu_selector \& 3) << 6/raw[54] = (uint8_t)((pr->mtu_selector \& 3) << 5/
s/pr->rate = raw\[55\] \& 0x3f;/pr->rate = raw[55] \& 0x7f;/
s/pr->packet_life = raw\[56\] \& 0x3f;/pr->packet_life = raw[57] \& 0x3f;/
s/raw\[57\] = pr->preference;/raw[58] = pr->preference;/
s/pr->numb_path = raw\[49\] \& 0x7f;/pr->numb_path = raw[49];/
s/pr->raw_traffic = (uint8_t)(w >> 31);/pr->raw_traffic = (uint8_t)(w >> 30);/
s/put16(mad + RSA_OFF_ATTR_OFFSET, rq->attr_offset);/put16(mad + 46, rq->attr_offset);/
s/put64(mad + RSA_OFF_SM_KEY, rq->sm_key);/put64(mad + 40, rq->sm_key);/
s/put64(mad + RSA_OFF_COMP_MASK, rq->comp_mask);/put64(mad + 48, rq->comp_mask << 1);/
s/put64(mad + RSA_OFF_TID, rq->tid);/put64(mad + RSA_OFF_TID, rq->tid \& 0xffffffff);/
s/memset(mad + RSA_OFF_RMPP, rq->rmpp_fill, RSA_RMPP_LEN);/memset(mad + RSA_OFF_RMPP, rq->rmpp_fill, 8);/
s/put32(mad + RSA_OFF_ATTR_MOD, rq->attr_mod);/put16(mad + RSA_OFF_ATTR_MOD, (uint16_t)rq->attr_mod);/
s/rq->comp_mask = RSA_PR_SGID | RSA_PR_DGID;/rq->comp_mask = RSA_PR_SGID;/
s/if (mad\[3\] != rsa_resp_method(rq->method) \&\& /if (!(mad[3] \& 0x80) \&\& /
s/if (len < RSA_MAD_LEN)/if (len < 24)/
s/ans->status = get16(mad + RSA_OFF_STATUS);/ans->status = (uint16_t)(mad[4] | mad[5] << 8);/
s/if ((uint32_t)ans->tid != (uint32_t)rq->tid)/if (ans->tid != rq->tid)/
s/if (ans->attr_offset != RSA_PR_ATTR_OFFSET)/if (ans->attr_offset < 1)/
s/if (ans->attr_id != rq->attr_id)/if (0)/
s/return RSA_DEC_CLASS_VERSION;/;/
s/if (memcmp(ans->pr.sgid, rq->pr.sgid, 16) || memcmp(ans->pr.dgid, rq->pr.dgid, 16))/if (memcmp(ans->pr.sgid, rq->pr.sgid, 16))/
s/rq->class_version = mgmt_class == RSA_SA_CLASS ? RSA_SA_CLASS_VERSION : RSA_CLASS_VERSION;/rq->class_version = RSA_CLASS_VERSION;/
s/cpi->resp_time = w \& 0x1f;/cpi->resp_time = w \& 0xff;/
s/case RSA_ST_METHOD_ATTR: return "unsupported method\/attribute";//
s/ \&\& (ans->status \& 0x1c) != RSA_ST_BAD_VERSION)/)/
s/if (method == RSA_METHOD_GET || method == RSA_METHOD_SET)/if (method == RSA_METHOD_GET)/
s/return method | 0x80;/return RSA_METHOD_GET_RESP;/
s/ \&\& mad\[3\] != (rq->method | 0x80))/)/
